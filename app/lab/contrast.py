"""Runs for the contrast views: attention vs FFN under one nudge, and the misconception
checks. Validated requests in, plain dicts (NumPy arrays inside) out.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import torch

from app.analysis import compare_outputs, flop_count, param_counts
from app.analysis.budget import attention_flop_count
from app.analysis.compare import max_abs_diff
from app.analysis.perturbation import PerturbationStats
from app.api.schemas.ffn import PerturbRequest
from app.api.schemas.teaching import AttentionVsFFNRequest
from app.config import Settings
from app.lab import ffn as runner
from app.model.attention import SelfAttention
from app.model.ffn import PositionwiseFeedForward
from app.services.weight_cache import WeightCache


def nudge_vector(req: PerturbRequest) -> torch.Tensor:
    """float32 [d_model]: the submitted `delta`, else a random direction of norm `scale`."""
    given = req.delta_array
    if given is not None:
        return torch.from_numpy(given)
    scale = req.scale if req.scale is not None else 1.0
    return runner.random_direction(req.d_model, scale, req.direction_seed)


def nudged(x: torch.Tensor, position: int, nudge: torch.Tensor) -> torch.Tensor:
    """A copy of x [T, d_model] with `nudge` added to row `position`."""
    out = x.clone()
    out[position] += nudge
    return out


def _delta_out(stats: PerturbationStats) -> dict[str, Any]:
    norms = stats.delta_norm_per_position
    return {
        "delta_norm_per_position": norms,
        "changed_positions": stats.changed_positions,
        "moved_count": int((norms > 0).sum()),
        "max_abs_change_other_positions": stats.max_abs_change_other_positions,
        "influence": None,
    }


def _influence(fn: Any, x: torch.Tensor, base: torch.Tensor, nudge: torch.Tensor) -> torch.Tensor:
    """[T, T]: row i = ‖fn(x with token i nudged) − fn(x)‖ per output row (separate calls)."""
    rows = []
    for i in range(x.shape[0]):
        out = fn(nudged(x, i, nudge))
        rows.append(torch.linalg.vector_norm(out - base, dim=1))
    return torch.stack(rows)


def attention_vs_ffn(
    req: AttentionVsFFNRequest, cache: WeightCache, settings: Settings
) -> dict[str, Any]:
    """Everything POST /api/attention-vs-ffn returns (see `AttentionVsFFNResponse`).

    Both sub-layers see the same tokens and the same nudge of token `position`; every
    state is a separate forward call of the same shape, so untouched FFN rows compare
    bit for bit.
    """
    model = runner.build_model(req, cache)
    attention = SelfAttention(req.d_model, req.num_heads, req.attention_seed, bias=req.bias)
    x = runner.input_tokens(req)
    nudge = nudge_vector(req)
    x_perturbed = nudged(x, req.position, nudge)

    def ffn(tokens: torch.Tensor) -> torch.Tensor:
        return model.trace(tokens, dropout_seed=req.dropout_seed).output

    with torch.inference_mode():
        a_before, a_after = attention.trace(x), attention.trace(x_perturbed)
        f_before, f_after = ffn(x), ffn(x_perturbed)
        attention_side = _delta_out(compare_outputs(a_before.output, a_after.output, req.position))
        ffn_side = _delta_out(compare_outputs(f_before, f_after, req.position))
        t = x.shape[0]
        cost = t * (
            flop_count(model.config, t).total
            + attention_flop_count(req.d_model, t, req.num_heads, bias=req.bias).total
        )
        skipped = None
        if not req.influence:
            skipped = "not requested"
        elif cost > settings.max_influence_flops:
            skipped = (
                f"the [T, T] maps need about {cost:,} FLOPs, over the limit of "
                f"{settings.max_influence_flops:,} (setting max_influence_flops)"
            )
        else:
            attention_side["influence"] = _influence(
                attention.forward, x, a_before.output, nudge
            ).numpy()
            ffn_side["influence"] = _influence(ffn, x, f_before, nudge).numpy()
    row_error = float((a_before.weights.sum(dim=-1) - 1.0).abs().max())
    attention_side |= {
        "weights": a_before.weights.numpy(),
        "weights_perturbed": a_after.weights.numpy(),
        "row_sums_max_error": row_error,
    }
    return {
        "config": runner.config_out(req, model.config),
        "position": req.position,
        "num_heads": req.num_heads,
        "attention": attention_side,
        "ffn": ffn_side,
        "influence_skipped_reason": skipped,
    }


def _linear_layers(model: PositionwiseFeedForward) -> list[dict[str, Any]]:
    roles = {"w1": "up", "w_gate": "gate", "w2": "down"}
    named = model.weights().named()
    return [
        {"name": name, "role": role, "shape": list(named[name].shape)}
        for name, role in roles.items()
        if name in named
    ]


def misconceptions(req: PerturbRequest, cache: WeightCache, settings: Settings) -> dict[str, Any]:
    """Everything POST /api/misconceptions returns (see `MisconceptionsResponse`).

    - layers: the FFN's linear maps (two, or three gated); `additivity_gap` is
      max |FFN(a + b) − FFN(a) − FFN(b) + FFN(0)|, zero for any single affine layer;
      `no_activation_gap` is max |(x W1 + b1) W2 + b2 − (x (W1 W2) + b1 W2 + b2)|: without
      the activation the two maps would collapse into one [d_model, d_model] layer (for
      gated variants this is the up/down path alone). Gated variants also get
      `no_activation_bilinear_gap`, the additivity gap of the gated FFN with the
      activation removed, g(x) = ((x W_gate + b_gate) ⊙ (x W1 + b1)) W2 + b2: a bilinear
      map of x, so the gap is not 0 (Shazeer 2020 calls this variant "Bilinear").
    - mixing: the perturbation numbers (only the nudged row moves).
    - shared_weights: the module's parameter count measured after runs with several T
      (it never changes), the FLOPs (they do), and max |FFN(x_j) − FFN(x)_j| with each
      row run alone.
    """
    model = runner.build_model(req, cache)
    x = runner.input_tokens(req)
    t = x.shape[0]
    weights = model.weights()

    def ffn(tokens: torch.Tensor) -> torch.Tensor:
        return model.trace(tokens, dropout_seed=req.dropout_seed).output

    with torch.inference_mode():
        base = ffn(x)
        b = x.flip(0)
        additivity = max_abs_diff(ffn(x + b), ffn(x) + ffn(b) - ffn(torch.zeros_like(x)))
        two_maps = x @ weights.w1
        collapsed = x @ (weights.w1 @ weights.w2)
        if weights.b1 is not None:
            two_maps = two_maps + weights.b1
            collapsed = collapsed + weights.b1 @ weights.w2
        two_maps = two_maps @ weights.w2
        no_activation = max_abs_diff(two_maps, collapsed)
        bilinear = None
        if weights.w_gate is not None:

            def gated_without_activation(tokens: torch.Tensor) -> torch.Tensor:
                gate = tokens @ weights.w_gate  # type: ignore[operator]
                up = tokens @ weights.w1
                if weights.b_gate is not None:
                    gate = gate + weights.b_gate
                if weights.b1 is not None:
                    up = up + weights.b1
                out = (gate * up) @ weights.w2
                return out if weights.b2 is None else out + weights.b2

            g = gated_without_activation
            bilinear = max_abs_diff(g(x + b), g(x) + g(b) - g(torch.zeros_like(x)))
        stats = compare_outputs(base, ffn(nudged(x, req.position, nudge_vector(req))), req.position)
        ladder = sorted({1, t, min(2 * t, settings.max_tokens), settings.max_tokens})
        measured: list[int] = []
        for n in ladder:
            ffn(x[torch.arange(n) % t])
            measured.append(sum(p.numel() for p in model.parameters()))
        row_by_row = max(max_abs_diff(ffn(x[j : j + 1])[0], base[j]) for j in range(t))
    return {
        "config": runner.config_out(req, model.config),
        "layers": _linear_layers(model),
        "additivity_gap": additivity,
        "no_activation_gap": no_activation,
        "no_activation_bilinear_gap": bilinear,
        "mixing": {
            "position": req.position,
            "changed_positions": stats.changed_positions,
            "max_abs_change_other_positions": stats.max_abs_change_other_positions,
            "delta_norm_per_position": stats.delta_norm_per_position,
        },
        "shared_weights": {
            "tokens": ladder,
            "params_measured": measured,
            "params_formula": param_counts(model.config)["total"],
            "flops": [flop_count(model.config, n).total for n in ladder],
            "param_shapes": {k: list(v.shape) for k, v in weights.named().items()},
            "row_by_row_max_abs_diff": row_by_row,
            "flops_detail": asdict(flop_count(model.config, t)),
        },
    }
