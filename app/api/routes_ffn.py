"""POST endpoints that run the FFN: forward and perturb.

Small requests (at most `inline_max_flops`, weights already cached or small) are computed
on the event loop: for them the forward pass takes microseconds and a hop to the thread
pool, plus one per synchronous dependency, costs more than the work. Bigger ones run in
the thread pool so that the server keeps answering while they compute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api import runner
from app.api.encoding import json_response, server_timing
from app.api.schemas import ForwardRequest, ForwardResponse, PerturbRequest, PerturbResponse
from app.config import Settings, get_settings
from app.model.cache import WeightCache

router = APIRouter(prefix="/api", tags=["ffn"])


def _is_small(req: ForwardRequest, settings: Settings, passes: int) -> bool:
    """True when `passes` forward passes of this request cost at most `inline_max_flops`."""
    gated = 3 if req.ffn_config().gated else 2
    flops = 2 * gated * req.token_count * req.d_model * req.d_ff * passes
    return flops <= settings.inline_max_flops


async def _run(small: bool, fn: Callable[..., Response], *args: Any) -> Response:
    return fn(*args) if small else await run_in_threadpool(fn, *args)


def _forward(req: ForwardRequest, cache: WeightCache, settings: Settings) -> Response:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    content = runner.forward(req, cache, settings, timings)
    timings["analysis"] = time.perf_counter() - started - timings["model"] - timings["forward"]
    response = json_response(content)
    timings["encode"] = time.perf_counter() - started - sum(timings.values())
    response.headers["server-timing"] = server_timing(timings)
    return response


def _perturb(req: PerturbRequest, cache: WeightCache, settings: Settings) -> Response:
    return json_response(runner.perturb(req, cache, settings))


@router.post("/forward", response_model=ForwardResponse)
async def post_forward(req: ForwardRequest, request: Request) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache
    return await _run(_is_small(req, settings, 1), _forward, req, cache, settings)


@router.post("/perturb", response_model=PerturbResponse)
async def post_perturb(req: PerturbRequest, request: Request) -> Response:
    """Nudge one token and return the output before and after, row by row."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache
    return await _run(_is_small(req, settings, 2), _perturb, req, cache, settings)
