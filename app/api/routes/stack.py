"""POST /api/stack: a thin wrapper of `app.lab.stack` (validated request in, JSON out)."""

from __future__ import annotations

from typing import Any

import torch
from fastapi import APIRouter, Request, Response

from app.api.encoding import json_response
from app.api.schemas.responses import ErrorOut
from app.api.schemas.stack import StackRequest, StackResponse
from app.config import Settings, get_settings
from app.lab import ffn as runner
from app.lab import pretrained as runner_pretrained
from app.lab.stack import LayerChange, StackResult, build_stack, run_stack
from app.lab.stack_pretrained import pretrained_stack
from app.model.ffn import FFNWeights
from app.model.pretrained import MODEL_ID
from app.services.compute import ComputePools, Cost, checkpoint

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


def _nudge(req: StackRequest, d_model: int) -> torch.Tensor | None:
    if req.position is None:
        return None
    given = req.delta_array
    if given is not None:
        return torch.from_numpy(given)
    scale = 1.0 if req.scale is None else req.scale
    return runner.random_direction(d_model, scale, req.direction_seed)


def _threshold(req: StackRequest, settings: Settings) -> float:
    if req.sparsity_threshold is not None:
        return req.sparsity_threshold
    return settings.sparsity_threshold


def pretrained_answer(req: StackRequest, settings: Settings) -> dict[str, Any]:
    """POST /api/stack with a model: the real encoder's layers on the text's embeddings."""
    model = runner_pretrained.load_model()
    encoded = runner_pretrained.encode_text(model, req.text or "", settings)
    t = len(encoded.tokens)
    if req.position is not None and req.position >= t:
        raise runner_pretrained.invalid(
            "position",
            f"position = {req.position} is out of range: the text has {t} tokens, so position "
            f"must be in [0, {t - 1}]",
            req.position,
        )
    stack = pretrained_stack(model.encoder, req.n_layers, attention=req.attention)
    with torch.inference_mode():
        x = model.encoder.embed(encoded.ids)
    result = run_stack(
        stack,
        x,
        position=req.position,
        nudge=_nudge(req, model.config.hidden_size),
        threshold=_threshold(req, settings),
        between_passes=checkpoint,
    )
    ffn = model.encoder.layer(0).ffn
    config = runner.config_out(req.spec(), ffn.config) | {
        "num_tokens": t,
        "input_seed": None,
        "weights_source": "pretrained",
        "model": MODEL_ID,
        "layer": None,
    }
    return _answer(req, result, config) | {"tokens": encoded.tokens, "special": encoded.special}


def stack_answer(req: StackRequest, settings: Settings) -> dict[str, Any]:
    """Everything POST /api/stack returns (see `StackResponse`)."""
    if req.model is not None:
        return pretrained_answer(req, settings)
    config = req.ffn_config()
    submitted = req.weights_arrays
    weights = (
        None
        if submitted is None
        else FFNWeights.from_named({k: torch.from_numpy(v) for k, v in submitted.items()})
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
    )
    checkpoint()
    result = run_stack(
        stack,
        runner.input_tokens(req.spec()),
        position=req.position,
        nudge=_nudge(req, req.d_model),
        threshold=_threshold(req, settings),
        between_passes=checkpoint,
    )
    return _answer(req, result, runner.config_out(req.spec(), config))


def _answer(req: StackRequest, result: StackResult, config: dict[str, Any]) -> dict[str, Any]:
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
        "config": config,
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
    pools: ComputePools = request.app.state.compute_pools
    params, flops = req.stack_params(), req.stack_flops()
    heavy = (
        req.model is not None
        or params > settings.heavy_min_params
        or flops > settings.heavy_min_flops
    )
    cost = Cost(params=params, flops=flops, cost_class="heavy" if heavy else "light")

    def work() -> Response:
        content = stack_answer(req, settings)
        checkpoint()
        return json_response(content)

    return await pools.run(work, cost)
