"""POST endpoints that run the FFN: forward and perturb."""

from __future__ import annotations

import time

from fastapi import APIRouter, Response

from app.api import runner
from app.api.deps import CacheDep, SettingsDep
from app.api.encoding import json_response, server_timing
from app.api.schemas import ForwardRequest, ForwardResponse, PerturbRequest, PerturbResponse

router = APIRouter(prefix="/api", tags=["ffn"])


@router.post("/forward", response_model=ForwardResponse)
def post_forward(req: ForwardRequest, cache: CacheDep, settings: SettingsDep) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    content = runner.forward(req, cache, settings, timings)
    timings["analysis"] = time.perf_counter() - started - timings["model"] - timings["forward"]
    response = json_response(content)
    timings["encode"] = time.perf_counter() - started - sum(timings.values())
    response.headers["server-timing"] = server_timing(timings)
    return response


@router.post("/perturb", response_model=PerturbResponse)
def post_perturb(req: PerturbRequest, cache: CacheDep, settings: SettingsDep) -> Response:
    """Nudge one token and return the output before and after, row by row."""
    return json_response(runner.perturb(req, cache, settings))
