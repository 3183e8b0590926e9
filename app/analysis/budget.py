"""Parameter and FLOP budget of the FFN against self-attention, from shapes alone.

Same convention as `app.analysis.counts` (Kaplan et al. 2020, Appendix): a multiply-add is
2 FLOPs; a bias add, an activation, a softmax element and a gating product are 1 FLOP per
element. At d_ff = 4 d_model the FFN holds 8 d_model² weights and attention 4 d_model²
(W_Q, W_K, W_V, W_O), so about two thirds of a block's parameters sit in the FFN.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from app.analysis.counts import flop_count, param_counts
from app.model.ffn import FFNConfig


def attention_param_counts(d_model: int, *, bias: bool) -> dict[str, int]:
    """Parameters of W_Q, W_K, W_V, W_O ([d_model, d_model] each), biases, and `total`.

    The count depends on neither T nor the number of heads: 4 d_model² (+ 4 d_model).
    """
    if d_model < 1:
        raise ValueError(f"d_model must be a positive integer, got {d_model!r}")
    counts: dict[str, int] = {}
    for name in ("q", "k", "v", "o"):
        counts[f"w_{name}"] = d_model * d_model
        if bias:
            counts[f"b_{name}"] = d_model
    counts["total"] = sum(counts.values())
    return counts


@dataclass(frozen=True)
class AttentionFlops:
    """FLOPs of one self-attention pass over T tokens.

    Attributes:
        projections: 2 T d_model² for each of Q, K, V and the output W_O (8 T d_model²).
        scores: 2 T² d_model for Q K^T over all heads.
        softmax: h T², one per attention weight (scaling folded in).
        mix: 2 T² d_model for the weighted sum of V.
        bias: 4 T d_model when biases are on, else 0.
        total: the sum; grows with T² through scores and mix.
        per_token: total / T.
    """

    projections: int
    scores: int
    softmax: int
    mix: int
    bias: int
    total: int
    per_token: int


def attention_flop_count(
    d_model: int, num_tokens: int, num_heads: int = 1, *, bias: bool = True
) -> AttentionFlops:
    """FLOPs of self-attention on `num_tokens` tokens (see `AttentionFlops`).

    Raises:
        ValueError: for non-positive sizes.
    """
    if min(d_model, num_tokens, num_heads) < 1:
        raise ValueError(
            f"d_model, num_tokens and num_heads must be >= 1, got {d_model}, {num_tokens}, "
            f"{num_heads}"
        )
    t, d = num_tokens, d_model
    projections = 4 * 2 * t * d * d
    scores = 2 * t * t * d
    softmax = num_heads * t * t
    mix = 2 * t * t * d
    bias_flops = 4 * t * d if bias else 0
    total = projections + scores + softmax + mix + bias_flops
    return AttentionFlops(projections, scores, softmax, mix, bias_flops, total, total // t)


def llama_d_ff(d_model: int, multiple_of: int = 256) -> int:
    """LLaMA's hidden width for SwiGLU: 2/3 of 4 d_model, rounded up to `multiple_of`.

    As in LLaMA's reference code: ``h = int(2 * 4 * d_model / 3)`` then rounded up to a
    multiple of `multiple_of` (Touvron et al. 2023, section 2.2). 4096 -> 11008.

    Raises:
        ValueError: for non-positive arguments.
    """
    if d_model < 1 or multiple_of < 1:
        raise ValueError(f"d_model and multiple_of must be >= 1, got {d_model}, {multiple_of}")
    hidden = int(2 * 4 * d_model / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def matched_gated_d_ff(d_model: int, d_ff: int, *, bias: bool) -> int:
    """The d_ff' that gives a gated FFN (three matrices) the parameter count of a plain one.

    Solves 3 d_model d_ff' (+ 2 d_ff' + d_model) = 2 d_model d_ff (+ d_ff + d_model) and
    rounds to the nearest integer (at least 1): about 2/3 of d_ff.

    Raises:
        ValueError: for non-positive sizes.
    """
    if d_model < 1 or d_ff < 1:
        raise ValueError(f"d_model and d_ff must be >= 1, got {d_model}, {d_ff}")
    exact = d_ff * (2 * d_model + 1) / (3 * d_model + 2) if bias else 2 * d_ff / 3
    return max(1, math.floor(exact + 0.5))


def token_ladder(num_tokens: int, max_tokens: int) -> list[int]:
    """T values for a budget chart: powers of two up to `max_tokens`, plus `num_tokens`."""
    values = {num_tokens, max_tokens}
    t = 1
    while t <= max_tokens:
        values.add(t)
        t *= 2
    return sorted(v for v in values if 1 <= v <= max_tokens)


def block_budget(
    config: FFNConfig, num_tokens: int, num_heads: int, max_tokens: int
) -> dict[str, Any]:
    """FFN vs attention: parameters, FLOPs at T = `num_tokens`, and both over a ladder of T.

    Returns plain data: ``ffn``/``attention`` with ``params`` (per tensor and total) and
    ``flops``; ``ffn_share_of_params`` (FFN / (FFN + attention)); ``series`` with
    ``tokens``, ``ffn_params``, ``attention_params``, ``ffn_flops``, ``attention_flops``
    (one value per T: the parameter lines are flat, the FLOP lines are not).
    """
    ffn_params = param_counts(config)
    attn_params = attention_param_counts(config.d_model, bias=config.bias)
    tokens = token_ladder(num_tokens, max_tokens)
    return {
        "num_tokens": num_tokens,
        "num_heads": num_heads,
        "ffn": {
            "params": ffn_params,
            "flops": asdict(flop_count(config, num_tokens)),
        },
        "attention": {
            "params": attn_params,
            "flops": asdict(
                attention_flop_count(config.d_model, num_tokens, num_heads, bias=config.bias)
            ),
        },
        "ffn_share_of_params": ffn_params["total"] / (ffn_params["total"] + attn_params["total"]),
        "params_ratio": ffn_params["total"] / attn_params["total"],
        "series": {
            "tokens": tokens,
            "ffn_params": [ffn_params["total"]] * len(tokens),
            "attention_params": [attn_params["total"]] * len(tokens),
            "ffn_flops": [flop_count(config, t).total for t in tokens],
            "attention_flops": [
                attention_flop_count(config.d_model, t, num_heads, bias=config.bias).total
                for t in tokens
            ],
        },
    }
