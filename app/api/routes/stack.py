"""POST /api/stack: a thin wrapper of `app.lab.stack.answer` (validated request in, JSON out)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from app.api.compute import run_in_pools
from app.api.deps import lab_limits
from app.api.finite import finite_response
from app.api.json_body import FastJsonRoute
from app.api.schemas.responses import ErrorOut
from app.api.schemas.stack import StackRequest, StackResponse
from app.config import get_settings
from app.lab.stack.answer import stack_answer
from app.services.compute import ComputePools, Cost, checkpoint

router = APIRouter(prefix="/api", tags=["depth"], route_class=FastJsonRoute)

ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "request body too large"},
    503: {"model": ErrorOut, "description": "busy: the request's time budget ran out"},
}


@router.post("/stack", response_model=StackResponse, responses=ERRORS)
async def post_stack(req: StackRequest, request: Request) -> Response:
    """A stack of n_layers layers, each with its own seeded FFN (or one shared, ALBERT-style),
    optionally with self-attention; with `position`, a nudge traced through every layer."""
    settings = get_settings()
    pools: ComputePools = request.app.state.compute_pools
    spec = req.spec()
    params, flops = spec.stack_params(), spec.stack_flops(settings.max_tokens)
    heavy = (
        req.model is not None
        or params > settings.heavy_min_params
        or flops > settings.heavy_min_flops
    )
    cost = Cost(params=params, flops=flops, cost_class="heavy" if heavy else "light")

    def work() -> Response:
        content = stack_answer(spec, lab_limits(settings))
        checkpoint()
        return finite_response(content, spec, lambda s: stack_answer(s, lab_limits(settings)))

    return await run_in_pools(pools, work, cost)
