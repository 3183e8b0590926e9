"""POST endpoints that run the FFN: forward and perturb.

The work runs in a bounded thread pool chosen by its estimated cost, within a time budget
(see `app.api.compute`); the response is encoded by orjson in the same worker thread.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from app.api import runner
from app.api.compute import checkpoint, estimate_cost
from app.api.deps import CacheDep, PoolsDep, SettingsDep
from app.api.encoding import json_response
from app.api.schemas import (
    ErrorOut,
    ForwardRequest,
    ForwardResponse,
    PerturbRequest,
    PerturbResponse,
)

router = APIRouter(prefix="/api", tags=["ffn"])

ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "request body over max_body_bytes"},
    503: {"model": ErrorOut, "description": "busy: the request's time budget ran out"},
}


@router.post("/forward", response_model=ForwardResponse, responses=ERRORS)
async def post_forward(
    req: ForwardRequest, cache: CacheDep, settings: SettingsDep, pools: PoolsDep
) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor."""

    def work() -> Response:
        data = runner.forward(req, cache, settings)
        checkpoint()
        return json_response(data)

    return await pools.run(work, estimate_cost(req.ffn_config(), req.token_count, settings))


@router.post("/perturb", response_model=PerturbResponse, responses=ERRORS)
async def post_perturb(
    req: PerturbRequest, cache: CacheDep, settings: SettingsDep, pools: PoolsDep
) -> Response:
    """Nudge one token and return the output before and after, row by row."""

    def work() -> Response:
        data = runner.perturb(req, cache)
        checkpoint()
        return json_response(data)

    cost = estimate_cost(req.ffn_config(), req.token_count, settings, passes=2)
    return await pools.run(work, cost)
