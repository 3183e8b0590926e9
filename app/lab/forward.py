"""Runs the FFN for a validated `ForwardSpec` / `PerturbSpec` and returns the answer as a
plain dict (NumPy arrays inside): the one function per answer that the API, the snapshot and
the notebook (`app.lab.python_api`) all call. No HTTP, no Pydantic.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from app.analysis import PerturbationStats, compare_outputs, flop_count, param_counts, sparsity
from app.analysis.display import histogram
from app.analysis.tensor_names import tensor_names
from app.lab.display import Group, summarise
from app.lab.limits import Limits
from app.lab.spec.specs import ForwardSpec, PerturbSpec
from app.model.ffn import (
    FFNConfig,
    FFNTrace,
    FFNWeights,
    PositionwiseFeedForward,
    expected_shapes,
)
from app.model.seeding import generator as stream_generator
from app.services.checkpoint import checkpoint
from app.services.weight_cache import WeightCache


def build_model(req: ForwardSpec, cache: WeightCache) -> PositionwiseFeedForward:
    """The FFN for this request: submitted weights, or the cached model on seeded ones.

    A cached model is shared between requests and never modified here; its mode is fixed
    by its config (dropout acts only when `mode` is "train" and `dropout` > 0).
    """
    config = req.ffn_config()
    submitted = req.weights_arrays
    if submitted is None:
        model = cache.model(config, req.seed)
        if model.training != (config.dropout > 0):  # a caller must never switch it; heal
            model.train(config.dropout > 0)
        return model
    weights = FFNWeights.from_named({k: torch.from_numpy(v) for k, v in submitted.items()})
    model = PositionwiseFeedForward(config, weights)
    model.train(req.mode == "train")
    return model


def input_tokens(req: ForwardSpec) -> torch.Tensor:
    """float32 [T, d_model]: the submitted tokens, or N(0, 1) tokens from the "inputs"
    stream of input_seed (`app.model.seeding`: independent of the weights at equal seeds)."""
    tokens = req.tokens_array
    if tokens is not None:
        return torch.from_numpy(tokens)
    generator = stream_generator(req.input_seed, "inputs")
    return torch.randn(req.token_count, req.d_model, generator=generator)


def run_trace(model: PositionwiseFeedForward, x: torch.Tensor, req: ForwardSpec) -> FFNTrace:
    """One forward pass under `torch.inference_mode()`."""
    with torch.inference_mode():
        return model.trace(x, dropout_seed=req.dropout_seed)


def config_out(req: ForwardSpec, config: FFNConfig) -> dict[str, Any]:
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


def forward_answer(
    req: ForwardSpec,
    cache: WeightCache,
    limits: Limits,
    timings: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Everything POST /api/forward returns (see `ForwardResponse`).

    `timings`, when given, receives seconds spent on "model" (cache lookup or build) and
    "forward" (the bare forward pass), for the Server-Timing header.
    """
    t0 = time.perf_counter()
    model = build_model(req, cache)
    checkpoint()
    config = model.config
    x = input_tokens(req)
    t1 = time.perf_counter()
    trace = run_trace(model, x, req)
    checkpoint()
    if timings is not None:
        timings["model"] = t1 - t0
        timings["forward"] = time.perf_counter() - t1
    threshold = req.sparsity_threshold
    if threshold is None:
        threshold = limits.sparsity_threshold
    stats = sparsity(trace.hidden, config.activation, threshold)
    shapes = {
        "input": list(x.shape),
        "pre_activation": list(trace.pre_activation.shape),
        "hidden": list(trace.hidden.shape),
        "output": list(trace.output.shape),
    }
    if trace.up is not None:
        shapes["up"] = list(trace.up.shape)
    shapes |= {name: list(shape) for name, shape in expected_shapes(config).items()}
    shown, reduction = summarise(
        [
            Group(
                {
                    "pre_activation": trace.pre_activation,
                    "up": trace.up,
                    "hidden": trace.hidden,
                    "dropped": trace.dropped,
                },
                "hidden",
            ),
            Group({"input": x, "output": trace.output}, "output"),
        ],
        with_room_for(limits, stats.per_neuron.size + stats.per_token.size),
        req.display,
        display_starts(req),
    )
    counts = histogram(trace.pre_activation, limits.histogram_bins)
    return {
        "config": config_out(req, config),
        "shapes": shapes,
        "input": shown["input"],
        "pre_activation": shown["pre_activation"],
        "up": shown["up"],
        "hidden": shown["hidden"],
        "dropped": shown["dropped"],
        "output": shown["output"],
        "sparsity": shallow_dict(stats),
        "params": param_counts(config),
        "flops": shallow_dict(flop_count(config, x.shape[0])),
        "weights": (
            {name: np.ascontiguousarray(t.numpy()) for name, t in model.weights().named().items()}
            if req.include_weights
            else None
        ),
        "reduction": reduction,
        "pre_activation_histogram": {"edges": counts.edges, "counts": counts.counts},
        "tensor_names": tensor_names(
            config.activation, config.gated, config.bias, weights=req.include_weights
        ),
    }


STATISTICS_ALLOWANCE = 4096
"""Numbers of full-size statistics an answer carries on top of its display budget."""


def with_room_for(limits: Limits, numbers: int) -> Limits:
    """`limits` with a display budget less what `numbers` of full-size statistics sent
    next to the summarised tensors (e.g. per-neuron sparsity, [d_ff]) need beyond
    `STATISTICS_ALLOWANCE`: they count toward the answer's ~1 MB too (at LLaMA-7B T 7,
    11,008 of them pushed /api/forward to 1.04 MB), while the paper's base model at T 16
    (2,064 of them) is still sent whole."""
    extra = max(0, numbers - STATISTICS_ALLOWANCE)
    if not extra:
        return limits
    budget = max(1, limits.display_max_values - extra)
    return replace(limits, display_max_values=budget)


def display_starts(req: ForwardSpec) -> dict[str, int]:
    """Where the display windows start, by lead tensor: d_ff units and d_model features."""
    return {"hidden": req.unit_start, "output": req.feature_start}


def shallow_dict(obj: Any) -> dict[str, Any]:
    """A (slot-less) dataclass's fields as a dict, values not copied: `asdict` deep-copies
    NumPy arrays and `dataclasses.fields` is slow on the hot path."""
    return dict(vars(obj))


def random_direction(d_model: int, scale: float, seed: int) -> torch.Tensor:
    """float32 [d_model]: a direction drawn from N(0, I) by the "nudge" stream of `seed`
    (`app.model.seeding`), rescaled to L2 norm `scale`."""
    generator = stream_generator(seed, "nudge")
    direction = torch.randn(d_model, generator=generator)
    scaled: torch.Tensor = direction * (scale / torch.linalg.vector_norm(direction))
    return scaled


def perturb_answer(req: PerturbSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
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
    shown, reduction = perturb_display(x, x_perturbed, before, after, stats, limits, req)
    return {
        "config": config_out(req, model.config),
        "position": req.position,
        **perturbed_tensors(shown),
        **change_fields(stats),
        "reduction": reduction,
    }


PERTURBED_TENSORS = ("input", "input_perturbed", "output", "output_perturbed", "output_delta")
"""The [T, d_model] tensors of a perturb answer (`perturb_display`), in the answer's order."""


def perturbed_tensors(shown: dict[str, Any]) -> dict[str, Any]:
    """`PERTURBED_TENSORS` from `perturb_display`'s shown tensors, in that order (the answer's
    JSON keys keep their order: a caller places this block where its answer has it)."""
    return {name: shown[name] for name in PERTURBED_TENSORS}


def change_fields(stats: PerturbationStats, prefix: str = "") -> dict[str, Any]:
    """What a nudge changed, as answer fields in this order: `delta_norm_per_position`
    (float32 [T], L2 norm of each output row's change), `changed_positions` (rows not
    bit-identical) and `max_abs_change_other_positions` (max |change| off `position`); each
    name after `prefix` (e.g. "layer_" for the whole encoder layer's change)."""
    return {
        f"{prefix}delta_norm_per_position": stats.delta_norm_per_position,
        f"{prefix}changed_positions": stats.changed_positions,
        f"{prefix}max_abs_change_other_positions": stats.max_abs_change_other_positions,
    }


def perturb_display(
    x: torch.Tensor,
    x_perturbed: torch.Tensor,
    before: FFNTrace,
    after: FFNTrace,
    stats: PerturbationStats,
    limits: Limits,
    req: ForwardSpec,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The [T, d_model] tensors of a perturb answer, windowed together from `feature_start`
    (see `summarise`): input, input_perturbed, output, output_perturbed, output_delta."""
    return summarise(
        [
            Group(
                {
                    "input": x,
                    "input_perturbed": x_perturbed,
                    "output": before.output,
                    "output_perturbed": after.output,
                    "output_delta": torch.from_numpy(stats.delta),
                },
                "output_delta",
            )
        ],
        limits,
        req.display,
        {"output_delta": req.feature_start},
    )
