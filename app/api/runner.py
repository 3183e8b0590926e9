"""Turns validated requests into FFN runs and plain response dicts (NumPy arrays inside).

No HTTP here beyond the request models: routes call these functions.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from app.analysis import compare_outputs, flop_count, param_counts, sparsity
from app.api.compute import checkpoint
from app.api.schemas import ForwardRequest, PerturbRequest
from app.config import Settings
from app.model.cache import WeightCache
from app.model.ffn import FFNConfig, FFNTrace, FFNWeights, PositionwiseFeedForward


def build_model(req: ForwardRequest, cache: WeightCache) -> PositionwiseFeedForward:
    """The FFN for this request: submitted weights, or seeded ones from the cache."""
    config = req.ffn_config()
    submitted = req.weights_arrays
    if submitted is not None:
        weights = FFNWeights(**{k: torch.from_numpy(v) for k, v in submitted.items()})
    else:
        weights = cache.get(
            config.d_model, config.d_ff, req.seed, gated=config.gated, bias=config.bias
        )
    model = PositionwiseFeedForward(config, weights)
    model.train(req.mode == "train")
    return model


def input_tokens(req: ForwardRequest) -> torch.Tensor:
    """float32 [T, d_model]: the submitted tokens, or N(0, 1) tokens seeded by input_seed."""
    tokens = req.tokens_array
    if tokens is not None:
        return torch.from_numpy(tokens)
    generator = torch.Generator().manual_seed(req.input_seed)
    return torch.randn(req.token_count, req.d_model, generator=generator)


def run_trace(model: PositionwiseFeedForward, x: torch.Tensor, req: ForwardRequest) -> FFNTrace:
    """One forward pass under `torch.inference_mode()`."""
    with torch.inference_mode():
        return model.trace(x, dropout_seed=req.dropout_seed)


def config_out(req: ForwardRequest, config: FFNConfig) -> dict[str, Any]:
    """The `config` block of a response."""
    return {
        "d_model": config.d_model,
        "d_ff": config.d_ff,
        "activation": config.activation,
        "gated": config.gated,
        "bias": config.bias,
        "seed": req.seed,
        "num_tokens": req.token_count,
        "input_seed": None if req.tokens_array is not None else req.input_seed,
        "mode": req.mode,
        "dropout": req.dropout,
        "dropout_seed": req.dropout_seed,
        "weights_source": "submitted" if req.weights_arrays is not None else "seeded",
    }


def forward(req: ForwardRequest, cache: WeightCache, settings: Settings) -> dict[str, Any]:
    """Everything POST /api/forward returns (see `ForwardResponse`)."""
    model = build_model(req, cache)
    checkpoint()
    config = model.config
    x = input_tokens(req)
    trace = run_trace(model, x, req)
    checkpoint()
    threshold = (
        req.sparsity_threshold
        if req.sparsity_threshold is not None
        else settings.sparsity_threshold
    )
    stats = sparsity(trace.hidden, config.activation, threshold)
    shapes = {
        "input": list(x.shape),
        "pre_activation": list(trace.pre_activation.shape),
        "hidden": list(trace.hidden.shape),
        "output": list(trace.output.shape),
    }
    if trace.up is not None:
        shapes["up"] = list(trace.up.shape)
    weights = model.weights().named()
    shapes |= {name: list(t.shape) for name, t in weights.items()}
    return {
        "config": config_out(req, config),
        "shapes": shapes,
        "input": x.numpy(),
        "pre_activation": trace.pre_activation.numpy(),
        "up": None if trace.up is None else trace.up.numpy(),
        "hidden": trace.hidden.numpy(),
        "dropped": None if trace.dropped is None else trace.dropped.numpy(),
        "output": trace.output.numpy(),
        "sparsity": asdict(stats),
        "params": param_counts(config),
        "flops": asdict(flop_count(config, x.shape[0])),
        "weights": (
            {name: np.ascontiguousarray(t.numpy()) for name, t in weights.items()}
            if req.include_weights
            else None
        ),
    }


def random_direction(d_model: int, scale: float, seed: int) -> torch.Tensor:
    """float32 [d_model]: a direction drawn from N(0, I) by `seed`, rescaled to L2 norm `scale`."""
    generator = torch.Generator().manual_seed(seed)
    direction = torch.randn(d_model, generator=generator)
    scaled: torch.Tensor = direction * (scale / torch.linalg.vector_norm(direction))
    return scaled


def perturb(req: PerturbRequest, cache: WeightCache) -> dict[str, Any]:
    """Everything POST /api/perturb returns (see `PerturbResponse`).

    The two states are computed by two separate forward calls of the same shape, so the
    rows that were not nudged are compared bit for bit.
    """
    model = build_model(req, cache)
    checkpoint()
    x = input_tokens(req)
    given = req.delta_array
    if given is not None:
        nudge = torch.from_numpy(given)
    else:
        nudge = random_direction(
            req.d_model, req.scale if req.scale is not None else 1.0, req.direction_seed
        )
    x_perturbed = x.clone()
    x_perturbed[req.position] += nudge
    before = run_trace(model, x, req)
    checkpoint()
    after = run_trace(model, x_perturbed, req)
    checkpoint()
    stats = compare_outputs(before.output, after.output, req.position)
    return {
        "config": config_out(req, model.config),
        "position": req.position,
        "input": x.numpy(),
        "input_perturbed": x_perturbed.numpy(),
        "output": before.output.numpy(),
        "output_perturbed": after.output.numpy(),
        "output_delta": stats.delta,
        "delta_norm_per_position": stats.delta_norm_per_position,
        "changed_positions": stats.changed_positions,
        "max_abs_change_other_positions": stats.max_abs_change_other_positions,
    }
