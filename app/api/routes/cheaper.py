"""POST /api/cheaper: a thin wrapper of `app.lab.cheaper.answer`."""

from __future__ import annotations

import torch
from fastapi import APIRouter, Request, Response

from app.api.compute import run_in_pools
from app.api.finite import finite_response
from app.api.json_body import FastJsonRoute
from app.api.schemas.cheaper import CheaperRequest, CheaperResponse
from app.config import get_settings
from app.lab.cheaper.answer import cheaper_answer
from app.services.compute import ComputePools, estimate_cost
from app.services.weight_cache import WeightCache

router = APIRouter(prefix="/api", tags=["teaching"], route_class=FastJsonRoute)


@router.post("/cheaper", response_model=CheaperResponse)
async def post_cheaper(req: CheaperRequest, request: Request) -> Response:
    """Parameters, FLOPs and output of a low-rank FFN and of MobileBERT's stacked FFNs beside
    the plain FFN, on the same input."""
    cache: WeightCache = request.app.state.weight_cache
    pools: ComputePools = request.app.state.compute_pools
    cost = estimate_cost(req.ffn_config(), req.token_count, get_settings(), passes=3)
    spec = req.spec()

    def work() -> Response:
        # One torch thread for this request (restored after): LAPACK's SVD of a 512 x 2048
        # W1 took 1.7 s on one thread and 50 s on two on a busy 2-core machine.
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            content = cheaper_answer(spec, cache)
            return finite_response(content, spec, lambda s: cheaper_answer(s, cache))
        finally:
            torch.set_num_threads(before)

    return await run_in_pools(pools, work, cost)
