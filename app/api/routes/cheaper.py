"""POST /api/cheaper: a thin wrapper of `app.lab.cheaper`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch
from fastapi import APIRouter, Request, Response

from app.api.encoding import json_response
from app.api.schemas.cheaper import CheaperRequest, CheaperResponse
from app.config import get_settings
from app.lab import ffn as runner
from app.lab.cheaper import compare
from app.services.compute import ComputePools, checkpoint, estimate_cost
from app.services.weight_cache import WeightCache

router = APIRouter(prefix="/api", tags=["teaching"])


def cheaper_answer(req: CheaperRequest, cache: WeightCache) -> dict[str, Any]:
    """Everything POST /api/cheaper returns (see `CheaperResponse`)."""
    spec = replace(req.spec(), mode="eval")
    plain = runner.build_model(spec, cache)
    x = runner.input_tokens(spec)
    rank, d_inner = req.rank_used, req.d_inner_used
    variants, singular = compare(
        plain, x, rank=rank, d_inner=d_inner, num_ffns=req.num_ffns, seed=req.seed
    )
    checkpoint()
    base = variants[0]
    base_norm = float(torch.linalg.matrix_norm(base.output))
    out = []
    for v in variants:
        diff = v.output - base.output
        out.append(
            {
                "name": v.name,
                "params": v.params,
                "params_ratio": v.params["total"] / base.params["total"],
                "flops": v.flops,
                "flops_ratio": v.flops / base.flops,
                "output": v.output.numpy(),
                "output_row_norms": torch.linalg.vector_norm(v.output, dim=1).numpy(),
                "approximates_plain": v.approximates_plain,
                "max_abs_diff_from_plain": float(diff.abs().max()) if diff.numel() else 0.0,
                "relative_error": (
                    float(torch.linalg.matrix_norm(diff)) / base_norm if base_norm > 0 else 0.0
                ),
            }
        )
    energy = singular.double() ** 2
    return {
        "config": runner.config_out(spec, plain.config),
        "rank": rank,
        "d_inner": d_inner,
        "num_ffns": req.num_ffns,
        "variants": out,
        "singular_values": singular.numpy(),
        "energy_kept": float(energy[:rank].sum() / energy.sum()) if energy.sum() > 0 else 1.0,
    }


@router.post("/cheaper", response_model=CheaperResponse)
async def post_cheaper(req: CheaperRequest, request: Request) -> Response:
    """Parameters, FLOPs and output of a low-rank FFN and of MobileBERT's stacked FFNs beside
    the plain FFN, on the same input."""
    cache: WeightCache = request.app.state.weight_cache
    pools: ComputePools = request.app.state.compute_pools
    cost = estimate_cost(req.ffn_config(), req.token_count, get_settings(), passes=3)

    def work() -> Response:
        # One torch thread for this request (restored after): LAPACK's SVD of a 512 x 2048
        # W1 took 1.7 s on one thread and 50 s on two on a busy 2-core machine.
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return json_response(cheaper_answer(req, cache))
        finally:
            torch.set_num_threads(before)

    return await pools.run(work, cost)
