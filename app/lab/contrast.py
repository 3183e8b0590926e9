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
from app.lab.forward import build_model, config_out, input_tokens, random_direction
from app.lab.limits import Limits
from app.lab.spec.specs import AttentionVsFFNSpec, PerturbSpec
from app.model import parallel
from app.model.attention import SelfAttention
from app.model.ffn import FFNWeights, PositionwiseFeedForward
from app.services.weight_cache import WeightCache


def nudge_vector(req: PerturbSpec) -> torch.Tensor:
    """float32 [d_model]: the submitted `delta`, else a random direction of norm `scale`."""
    given = req.delta_array
    if given is not None:
        return torch.from_numpy(given)
    scale = req.scale if req.scale is not None else 1.0
    return random_direction(req.d_model, scale, req.direction_seed)


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


def _heads_shown(num_heads: int, tokens: int, limits: Limits) -> int:
    """How many heads' [T, T] weights the answer carries: all of them while the two
    [h, T, T] tensors fit the display budget, else the first max(1, keep // T^2)."""
    if 2 * num_heads * tokens * tokens <= limits.display_max_values:
        return num_heads
    return max(1, min(num_heads, limits.display_keep_values // (tokens * tokens)))


def attention_vs_ffn(req: AttentionVsFFNSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/attention-vs-ffn returns (see `AttentionVsFFNResponse`).

    Both sub-layers see the same tokens and the same nudge of token `position`; every
    state is a separate forward call of the same shape, so untouched FFN rows compare
    bit for bit.
    """
    model = build_model(req, cache)
    attention = SelfAttention(
        req.d_model,
        req.num_heads,
        bias=req.bias,
        weights=cache.attention(req.d_model, req.attention_seed, bias=req.bias),
    )
    x = input_tokens(req)
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
        elif cost > limits.max_influence_flops:
            skipped = (
                f"the [T, T] maps need about {cost:,} FLOPs, over the limit of "
                f"{limits.max_influence_flops:,}"
            )
        else:
            attention_side["influence"] = _influence(
                attention.forward, x, a_before.output, nudge
            ).numpy()
            ffn_side["influence"] = _influence(ffn, x, f_before, nudge).numpy()
    row_error = float((a_before.weights.sum(dim=-1) - 1.0).abs().max())  # every head
    heads = _heads_shown(req.num_heads, t, limits)
    attention_side |= {
        "weights": a_before.weights[:heads].numpy(),
        "weights_perturbed": a_after.weights[:heads].numpy(),
        "heads_shown": list(range(heads)),
        "row_sums_max_error": row_error,
    }
    return {
        "config": config_out(req, model.config),
        "position": req.position,
        "num_heads": req.num_heads,
        "attention": attention_side,
        "ffn": ffn_side,
        "influence_skipped_reason": skipped,
        "influence_flops": cost,
        "influence_max_flops": limits.max_influence_flops,
    }


def _linear_layers(model: PositionwiseFeedForward) -> list[dict[str, Any]]:
    roles = {"w1": "up", "w_gate": "gate", "w2": "down"}
    named = model.weights().named()
    return [
        {"name": name, "role": role, "shape": list(named[name].shape)}
        for name, role in roles.items()
        if name in named
    ]


COLLAPSE_CHECK_FLOPS = 2_000_000_000
"""FLOPs allowed for the collapsed map W1 W2 in the misconceptions view: the full
[d_model, d_model] product costs 2 d_model^2 d_ff (369 GFLOP at LLaMA-7B, 16 s here), so
above this only the first k output features are checked (exact for those features)."""


def _collapse_gap(x: torch.Tensor, weights: FFNWeights) -> tuple[float, int]:
    """(max |(x W1 + b1) W2 + b2 − (x (W1 W2) + b1 W2 + b2)| over the first k output
    features, k): k = d_model when 2 d_model d_ff k <= COLLAPSE_CHECK_FLOPS allows it."""
    d_model, d_ff = weights.w1.shape
    k = max(1, min(d_model, COLLAPSE_CHECK_FLOPS // (2 * d_model * d_ff)))
    w1, w2 = weights.w1, weights.w2[:, :k]  # [d_model, d_ff], [d_ff, k]
    two_maps = parallel.matmul(x, w1)
    half = (d_model + 1) // 2  # W1 W2 by halves of its rows, at once: the same products
    top, bottom = parallel.both(lambda: w1[:half] @ w2, lambda: w1[half:] @ w2, w1.numel())
    collapsed = x @ torch.cat([top, bottom])
    if weights.b1 is not None:
        two_maps = two_maps + weights.b1
        collapsed = collapsed + weights.b1 @ w2
    return max_abs_diff(two_maps @ w2, collapsed), k


ROWS_ALONE_WEIGHT_READS = 300_000_000
"""Weights read by the "each row run alone" check of the misconceptions view: every row run
alone reads all of the FFN's weights (541 MB at LLaMA-7B, ~80 ms here), so above this only
evenly spread rows (the first and last among them) are run alone, and the answer says which
(two at LLaMA-7B; every row of Transformer-base at any T, of BERT-base up to T 63)."""


def _rows_alone(t: int, params: int) -> list[int]:
    """The positions run alone: all T of them, or k >= 2 evenly spread ones (first and last
    included) when T runs would read more than `ROWS_ALONE_WEIGHT_READS` weights."""
    k = max(2, min(t, ROWS_ALONE_WEIGHT_READS // max(1, params)))
    if k >= t:
        return list(range(t))
    return sorted({round(i * (t - 1) / (k - 1)) for i in range(k)})


def misconceptions(req: PerturbSpec, cache: WeightCache, limits: Limits) -> dict[str, Any]:
    """Everything POST /api/misconceptions returns (see `MisconceptionsResponse`).

    - layers: the FFN's linear maps (two, or three gated); `additivity_gap` is
      max |FFN(a + b) − FFN(a) − FFN(b) + FFN(0)|, zero for any single affine layer;
      `no_activation_gap` is max |(x W1 + b1) W2 + b2 − (x (W1 W2) + b1 W2 + b2)|: without
      the activation the two maps would collapse into one [d_model, d_model] layer (for
      gated variants this is the up/down path alone; over the first
      `no_activation_features_checked` output features: all of them up to the paper's
      base size, see `COLLAPSE_CHECK_FLOPS`). Gated variants also get
      `no_activation_bilinear_gap`, the additivity gap of the gated FFN with the
      activation removed, g(x) = ((x W_gate + b_gate) ⊙ (x W1 + b1)) W2 + b2: a bilinear
      map of x, so the gap is not 0 (Shazeer 2020 calls this variant "Bilinear").
    - mixing: the perturbation numbers (only the nudged row moves).
    - shared_weights: the module's parameter count measured after runs with several T
      (it never changes), the FLOPs (they do), and max |FFN(x_j) − FFN(x)_j| with each
      row j of `row_by_row_positions` run alone (every row, or evenly spread ones at big
      sizes: see `ROWS_ALONE_WEIGHT_READS`).
    """
    model = build_model(req, cache)
    x = input_tokens(req)
    t = x.shape[0]
    weights = model.weights()

    def ffn(tokens: torch.Tensor) -> torch.Tensor:
        return model.trace(tokens, dropout_seed=req.dropout_seed).output

    with torch.inference_mode():
        # Passes are reused where the input is the same: FFN(x) is `base`, FFN(0) is one
        # zero row (position-wise: every zero row gives it), the ladder's T = 1 run is row
        # 0 run alone and its T = t run is `base`. At LLaMA size every pass reads 541 MB.
        base = ffn(x)
        b = x.flip(0)
        zero_row = torch.zeros(1, x.shape[1])
        # FFN(a + b), FFN(b) and FFN(0) in one call of 2T + 1 rows: position-wise, each row
        # is the FFN of that row (batching may move the last bits, nothing a gap of this
        # size notices), and at LLaMA size one call reads the 541 MB of weights once.
        stacked = ffn(torch.cat([x + b, b, zero_row]))
        f_ab, f_b, zero = stacked[:t], stacked[t : 2 * t], stacked[2 * t :]
        additivity = max_abs_diff(f_ab, base + f_b - zero)
        no_activation, checked = _collapse_gap(x, weights)
        bilinear = None
        w_gate = weights.w_gate
        if w_gate is not None:

            def gated_without_activation(tokens: torch.Tensor) -> torch.Tensor:
                # gate and up at once, W2 by column blocks: the same products (parallel)
                gate, up = parallel.both(
                    lambda: tokens @ w_gate, lambda: tokens @ weights.w1, w_gate.numel()
                )
                if weights.b_gate is not None:
                    gate = gate + weights.b_gate
                if weights.b1 is not None:
                    up = up + weights.b1
                out = parallel.matmul(gate * up, weights.w2)
                return out if weights.b2 is None else out + weights.b2

            g = gated_without_activation(torch.cat([x + b, x, b, zero_row]))  # one call
            g_ab, g_a, g_b, g_zero = g[:t], g[t : 2 * t], g[2 * t : 3 * t], g[3 * t :]
            bilinear = max_abs_diff(g_ab, g_a + g_b - g_zero)
        stats = compare_outputs(base, ffn(nudged(x, req.position, nudge_vector(req))), req.position)
        alone = _rows_alone(t, sum(p.numel() for p in model.parameters()))
        row_by_row = max(max_abs_diff(ffn(x[j : j + 1])[0], base[j]) for j in alone)
        ladder = sorted({1, t, limits.max_tokens})
        measured: list[int] = []
        for n in ladder:
            if n not in (1, t):  # those two were run above
                ffn(x[torch.arange(n) % t])
            measured.append(sum(p.numel() for p in model.parameters()))
    return {
        "config": config_out(req, model.config),
        "layers": _linear_layers(model),
        "additivity_gap": additivity,
        "no_activation_gap": no_activation,
        "no_activation_features_checked": checked,
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
            "row_by_row_positions": alone,
            "flops_detail": asdict(flop_count(model.config, t)),
        },
    }
