"""POST /api/stack: a thin wrapper of `app.lab.stack` (validated request in, JSON out)."""

from __future__ import annotations

from typing import Any

import torch
from fastapi import APIRouter, Request, Response

from app.api import runner
from app.api.compute import ComputePools, Cost, checkpoint
from app.api.encoding import json_response
from app.api.responses import ErrorOut
from app.api.schemas_stack import StackRequest, StackResponse
from app.config import Settings, get_settings
from app.lab.stack import LayerChange, build_stack, run_stack
from app.model.cache import WeightCache
from app.model.ffn import FFNWeights

router = APIRouter(prefix="/api", tags=["depth"])

ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "request body too large"},
    503: {"model": ErrorOut, "description": "busy: the request's time budget ran out"},
}


def _change(change: LayerChange | None) -> dict[str, Any]:
    if change is None:
        return {
            "changed_positions": None,
            "delta_norm_per_position": None,
            "max_abs_change_other_positions": None,
        }
    return {
        "changed_positions": change.changed_positions,
        "delta_norm_per_position": change.delta_norm_per_position,
        "max_abs_change_other_positions": change.max_abs_change_other_positions,
    }


def stack_answer(req: StackRequest, cache: WeightCache, settings: Settings) -> dict[str, Any]:
    """Everything POST /api/stack returns (see `StackResponse`)."""
    config = req.ffn_config()
    submitted = req.weights_arrays
    weights = (
        None
        if submitted is None
        else FFNWeights(**{k: torch.from_numpy(v) for k, v in submitted.items()})
    )
    stack = build_stack(
        config,
        req.n_layers,
        req.seed,
        share_weights=req.share_weights,
        attention=req.attention,
        norm=req.norm,
        num_heads=req.num_heads,
        weights=weights,
        weight_source=lambda s: cache.get(
            config.d_model, config.d_ff, s, gated=config.gated, bias=config.bias
        ),
    )
    checkpoint()
    x = runner.input_tokens(req)
    nudge = None
    if req.position is not None:
        given = req.delta_array
        nudge = (
            torch.from_numpy(given)
            if given is not None
            else runner.random_direction(
                req.d_model, 1.0 if req.scale is None else req.scale, req.direction_seed
            )
        )
    threshold = (
        req.sparsity_threshold
        if req.sparsity_threshold is not None
        else settings.sparsity_threshold
    )
    result = run_stack(
        stack, x, position=req.position, nudge=nudge, threshold=threshold, between_passes=checkpoint
    )
    layers = [
        {
            "index": layer.index,
            "params": layer.params,
            "weights_stream": layer.weights_stream,
            "update_ratio": layer.update_ratio,
            "attention_update_ratio": layer.attention_update_ratio,
            "sparsity": runner.shallow_dict(layer.sparsity),
            "output_row_norms": layer.output_row_norms,
            **_change(layer.change),
        }
        for layer in result.layers
    ]
    return {
        "config": runner.config_out(req, config),
        "n_layers": req.n_layers,
        "share_weights": req.share_weights,
        "attention": req.attention,
        "norm": req.norm,
        "num_heads": req.num_heads,
        "layers": layers,
        "params_total": result.params_total,
        "attention_params_total": result.attention_params_total,
        "output": result.output.numpy(),
        "position": req.position,
        **_change(result.change),
    }


@router.post("/stack", response_model=StackResponse, responses=ERRORS)
async def post_stack(req: StackRequest, request: Request) -> Response:
    """A stack of n_layers layers, each with its own seeded FFN (or one shared, ALBERT-style),
    optionally with self-attention; with `position`, a nudge traced through every layer."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache
    pools: ComputePools = request.app.state.compute_pools
    params, flops = req.stack_params(), req.stack_flops()
    heavy = params > settings.heavy_min_params or flops > settings.heavy_min_flops
    cost = Cost(params=params, flops=flops, cost_class="heavy" if heavy else "light")

    def work() -> Response:
        content = stack_answer(req, cache, settings)
        checkpoint()
        return json_response(content)

    return await pools.run(work, cost)
