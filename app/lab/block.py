"""Runs for the block, variants, budget, Conv1d and dropout views.

Validated requests in, plain dicts (NumPy arrays inside) out; no HTTP here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, replace
from typing import Any

import torch

from app.analysis import flop_count, param_counts, sparsity
from app.analysis.budget import block_budget, llama_d_ff, matched_gated_d_ff
from app.analysis.compare import hidden_fractions, max_abs_diff, row_moments, row_norms
from app.analysis.curves import activation_curves, activation_values
from app.lab.display import Group, summarise
from app.lab.forward import build_model, config_out, input_tokens
from app.lab.limits import Limits
from app.lab.spec.specs import (
    VARIANTS,
    BlockSpec,
    BudgetSpec,
    DropoutSpec,
    ForwardSpec,
    VariantsSpec,
)
from app.model.activations import get_activation
from app.model.block import FFNBlock
from app.model.conv import ConvFeedForward
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.services.weight_cache import WeightCache

SEED_LIMIT = 2**31 - 1


def block(req: BlockSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/block returns (see `BlockResponse`).

    The step tensors [T, d_model] share their features: above the display budget they are
    summarised together (`reduction`); means, stds and norms are of the full rows."""
    model = build_model(req, cache)
    sub_layer = FFNBlock(model, req.norm)
    x = input_tokens(req)
    with torch.inference_mode():
        trace = sub_layer.trace(x, dropout_seed=req.dropout_seed)
    tensors = {
        "input": trace.input,
        "ffn_input": trace.ffn_input,
        "ffn_output": trace.ffn_output,
        "residual_sum": trace.residual_sum,
        "output": trace.output,
    }
    moments = {name: row_moments(t) for name, t in tensors.items()}
    shapes = {name: list(t.shape) for name, t in tensors.items()}
    shapes |= {name: list(t.shape) for name, t in model.weights().named().items()}
    shapes["hidden"] = [x.shape[0], model.config.d_ff]
    starts = {"output": req.feature_start}
    shown, reduction = summarise([Group(dict(tensors), "output")], limits, req.display, starts)
    return {
        "config": config_out(req, model.config),
        "norm": req.norm,
        "steps": list(trace.steps),
        "tensors": shown,
        "reduction": reduction,
        "shapes": shapes,
        "row_mean": {name: m["mean"] for name, m in moments.items()},
        "row_std": {name: m["std"] for name, m in moments.items()},
        "row_norm": {name: row_norms(t) for name, t in tensors.items()},
    }


def _sample(values: torch.Tensor, limit: int) -> torch.Tensor:
    """At most `limit` values of a flattened tensor, evenly strided (deterministic)."""
    flat = values.flatten()
    if flat.numel() <= limit:
        return flat
    index = torch.linspace(0, flat.numel() - 1, limit).round().long()
    return flat[index]


def _variant_weights(req: VariantsSpec, cache: WeightCache, d_ff: int, gated: bool) -> FFNWeights:
    """Seeded weights (W_gate drawn after W1, b1, W2, b2, so W1 is shared); submitted
    plain weights replace W1, b1, W2, b2 when the width is the requested one.

    The plain and gated variants get the very same W1, b1, W2, b2 tensors (one cache entry
    serves both, see `app.services.weight_cache`): equal values in separate copies may be aligned
    differently in memory and so round differently in the matmul."""
    weights = cache.get(req.d_model, d_ff, req.seed, gated=gated, bias=req.bias)
    submitted = req.weights_arrays
    if submitted is not None and d_ff == req.d_ff:
        plain = {k: torch.from_numpy(v) for k, v in submitted.items()}
        weights = replace(weights, **plain)
    return weights


def variants(req: VariantsSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/variants returns (see `VariantsResponse`)."""
    x = input_tokens(req)
    threshold = (
        req.sparsity_threshold if req.sparsity_threshold is not None else limits.sparsity_threshold
    )
    matched = matched_gated_d_ff(req.d_model, req.d_ff, bias=req.bias)
    if not req.match_params:  # build the gated entry first: every variant then shares it
        cache.get(req.d_model, req.d_ff, req.seed, gated=True, bias=req.bias)
    out: list[dict[str, Any]] = []
    reference: torch.Tensor | None = None
    shared_diffs: list[float] = []
    z_max = 4.0
    for name in VARIANTS:
        spec = get_activation(name)
        d_ff = matched if (req.match_params and spec.gated) else req.d_ff
        config = FFNConfig(req.d_model, d_ff, name, req.bias)
        model = PositionwiseFeedForward(config, _variant_weights(req, cache, d_ff, spec.gated))
        model.eval()
        with torch.inference_mode():
            trace = model.trace(x)
        up = trace.up if trace.up is not None else trace.pre_activation  # x W1 + b1
        if d_ff == req.d_ff:
            if reference is None:
                reference = up
            else:
                shared_diffs.append(max_abs_diff(up, reference))
        z = _sample(trace.pre_activation, limits.max_scatter_points)
        if z.numel():
            z_max = max(z_max, float(z.abs().max()))
        out.append(
            {
                "name": name,
                "label": spec.label,
                "gated": spec.gated,
                "d_ff": d_ff,
                "params": param_counts(config),
                "sparsity": asdict(sparsity(trace.hidden, name, threshold)),
                "fractions": hidden_fractions(trace.hidden, threshold),
                "scatter": {"z": z.numpy(), "y": activation_values(name, z).numpy()},
                "output_norm_mean": float(row_norms(trace.output).mean()),
            }
        )
    bound = min(float(math.ceil(z_max)), 50.0)
    four_d = 4 * req.d_model
    return {
        "config": config_out(req, FFNConfig(req.d_model, req.d_ff, "relu", req.bias)),
        "match_params": req.match_params,
        "variants": out,
        "curves": activation_curves(-bound, bound, 201),
        "shared_w1_max_abs_diff": max(shared_diffs) if shared_diffs else None,
        "llama": {
            "d_model": req.d_model,
            "four_d_model": four_d,
            "two_thirds": 2 * four_d / 3,
            "d_ff_rule": llama_d_ff(req.d_model),
            "d_ff_4096": llama_d_ff(4096),
            "two_thirds_4096": 2 * 4 * 4096 / 3,
            "matched_d_ff": matched,
            "plain_params": param_counts(FFNConfig(req.d_model, req.d_ff, "relu", req.bias))[
                "total"
            ],
            "gated_params_same_d_ff": param_counts(
                FFNConfig(req.d_model, req.d_ff, "swiglu", req.bias)
            )["total"],
            "gated_params_matched": param_counts(
                FFNConfig(req.d_model, matched, "swiglu", req.bias)
            )["total"],
        },
    }


def budget(req: BudgetSpec, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/budget returns (see `BudgetResponse`)."""
    config = FFNConfig(req.d_model, req.d_ff, req.activation, req.bias)
    data = block_budget(config, req.token_count, req.num_heads, limits.max_tokens)
    data["config"] = {
        "d_model": req.d_model,
        "d_ff": req.d_ff,
        "activation": req.activation,
        "gated": config.gated,
        "bias": req.bias,
        "num_tokens": req.token_count,
        "num_heads": req.num_heads,
    }
    return data


def conv1d_check(req: ForwardSpec, cache: WeightCache) -> dict[str, Any]:
    """Everything POST /api/conv1d-check returns (see `Conv1dResponse`); eval mode."""
    model = build_model(replace(req, mode="eval"), cache)
    conv = ConvFeedForward(model)
    x = input_tokens(req)
    with torch.inference_mode():
        linear_out = model(x)
        conv_out = conv(x)
    conv_shapes = {"conv1": list(conv.conv1.weight.shape), "conv2": list(conv.conv2.weight.shape)}
    if conv.conv_gate is not None:
        conv_shapes["conv_gate"] = list(conv.conv_gate.weight.shape)
    return {
        "config": config_out(req, model.config),
        "max_abs_diff": max_abs_diff(linear_out, conv_out),
        "conv_shapes": conv_shapes,
        "linear_shapes": {k: list(v.shape) for k, v in model.weights().named().items()},
    }


def dropout(req: DropoutSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/dropout returns (see `DropoutResponse`).

    Runs the same FFN three ways on the same tokens: train mode with `dropout_seed`, train
    mode with the next seed, eval mode; plus a reference FFN without dropout. `kept` is the
    trace's own W2 input in train mode (what W2 really receives).
    hidden, dropped and kept [T, d_ff] share their units: above the display budget they are
    summarised together (`reduction`); every statistic is of the full tensors.
    """
    p = req.dropout
    base = build_model(req, cache)
    config = FFNConfig(req.d_model, req.d_ff, req.activation, req.bias, dropout=p)
    model = PositionwiseFeedForward(config, base.weights())
    reference = PositionwiseFeedForward(replace(config, dropout=0.0), base.weights())
    reference.eval()
    x = input_tokens(req)
    with torch.inference_mode():
        model.train()
        train = model.trace(x, dropout_seed=req.dropout_seed)
        kept = train.kept
        other = model.trace(x, dropout_seed=(req.dropout_seed + 1) % SEED_LIMIT)
        model.eval()
        evaluated = model.trace(x, dropout_seed=req.dropout_seed)
        plain = reference.trace(x)
    dropped = (
        train.dropped
        if train.dropped is not None
        else torch.zeros_like(train.hidden, dtype=torch.bool)
    )
    expected = torch.where(dropped, torch.zeros_like(train.hidden), train.hidden / (1.0 - p))
    mode_req = replace(req, mode="train")
    shown, reduction = summarise(
        [Group({"hidden": train.hidden, "dropped": dropped, "kept": kept}, "hidden")],
        limits,
        req.display,
        {"hidden": req.unit_start},
    )
    return {
        "config": config_out(mode_req, config),
        "p": p,
        "scale": 1.0 / (1.0 - p),
        "hidden": shown["hidden"],
        "dropped": shown["dropped"],
        "kept": shown["kept"],
        "reduction": reduction,
        "dropped_fraction": float(dropped.to(torch.float32).mean()),
        "scaling_max_abs_error": max_abs_diff(kept, expected),
        "train_vs_eval_max_abs_diff": max_abs_diff(train.output, evaluated.output),
        "other_seed_max_abs_diff": max_abs_diff(train.output, other.output),
        "eval_identity_max_abs_diff": max_abs_diff(evaluated.output, plain.output),
        "flops": asdict(flop_count(config, x.shape[0])),
    }
