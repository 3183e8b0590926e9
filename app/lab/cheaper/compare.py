"""Cheaper FFNs, measured: a low-rank FFN and MobileBERT's stacked FFNs
beside the plain one, with parameter and FLOP counts and the output on the same input.

* Low-rank: W1 [d_model, d_ff] is factored through rank r, W1 ~ U V with U [d_model, r],
  V [r, d_ff]: the truncated SVD of the plain FFN's W1 (its best rank-r approximation,
  Eckart & Young 1936), so the output approximates the plain one and the error is shown.
  hidden = act(x U V + b1); W2, b2 (and a gate) are the plain FFN's.
* Stacked (MobileBERT, Sun et al. 2020): a bottleneck d_model -> d_inner, F small FFNs
  d_inner -> 4 d_inner -> d_inner applied in turn, each with a residual add
  (x <- x + FFN_k(x)), and a projection back d_inner -> d_model. Its weights are its own
  (seeded streams "stacked.in", "stacked.ffn{k}", "stacked.out"): a different network of
  the same input and output shape, not an approximation of the plain one. (MobileBERT
  normalises with its element-wise NoNorm and puts attention inside the bottleneck; the
  FFN part alone is shown here.)

FLOPs follow `app.analysis.counts`: a multiply-add is 2, a bias add, activation, gating
product or residual add is 1 per element.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from app.analysis import flop_count, param_counts
from app.model.cheaper import LowRankFFN, StackedFFN
from app.model.ffn import PositionwiseFeedForward


def low_rank_param_counts(module: LowRankFFN) -> dict[str, int]:
    """u, v in place of w1; the rest as the plain FFN; and total."""
    counts = {k: v for k, v in param_counts(module.config).items() if k not in ("w1", "total")}
    counts = {"u": module.u.numel(), "v": module.v.numel(), **counts}
    counts["total"] = sum(counts.values())
    return counts


def low_rank_flops(module: LowRankFFN, num_tokens: int) -> int:
    """FLOPs of one pass: the plain FFN's, with 2 T (d_model r + r d_ff) for x U V."""
    plain = flop_count(module.config, num_tokens)
    d_model, d_ff, t = module.config.d_model, module.config.d_ff, num_tokens
    w1_flops = 2 * t * d_model * d_ff
    return plain.total - w1_flops + 2 * t * (d_model * module.rank + module.rank * d_ff)


def stacked_param_counts(module: StackedFFN) -> dict[str, int]:
    """bottleneck_in, ffns (all F), bottleneck_out, and total."""
    bias = 1 if module.bias else 0
    down = module.d_model * module.d_inner + bias * module.d_inner
    up = module.d_inner * module.d_model + bias * module.d_model
    ffns = len(module.ffns) * param_counts(module.small)["total"]
    return {
        "bottleneck_in": down,
        "ffns": ffns,
        "bottleneck_out": up,
        "total": down + ffns + up,
    }


def stacked_flops(module: StackedFFN, num_tokens: int) -> int:
    """FLOPs of one pass: both projections, F small FFNs and F residual adds."""
    t, bias = num_tokens, 1 if module.bias else 0
    projections = 2 * t * module.d_model * module.d_inner * 2
    biases = bias * t * (module.d_inner + module.d_model)
    small = len(module.ffns) * (flop_count(module.small, t).total + t * module.d_inner)
    return projections + biases + small


@dataclass(frozen=True)
class Variant:
    """One FFN on the shared input.

    Attributes:
        name: "plain", "low_rank" or "stacked".
        params: parameters per part and "total".
        flops: FLOPs of one pass over the T tokens.
        output: float32 [T, d_model].
        approximates_plain: True when its weights are derived from the plain FFN's.
    """

    name: str
    params: dict[str, int]
    flops: int
    output: Tensor
    approximates_plain: bool


def compare(
    plain: PositionwiseFeedForward, x: Tensor, *, rank: int, d_inner: int, num_ffns: int, seed: int
) -> tuple[list[Variant], Tensor]:
    """The plain FFN, its rank-`rank` version and a stacked FFN on x [T, d_model].

    Returns (variants, the plain W1's singular values).

    Raises:
        CheaperError: as `LowRankFFN` and `StackedFFN`.
    """
    config = plain.config
    t = x.shape[0]
    low = LowRankFFN(plain, rank)
    stacked = StackedFFN(config.d_model, d_inner, num_ffns, config.activation, config.bias, seed)
    with torch.inference_mode():
        outputs = (plain(x), low(x), stacked(x))
    variants = [
        Variant("plain", param_counts(config), flop_count(config, t).total, outputs[0], True),
        Variant("low_rank", low_rank_param_counts(low), low_rank_flops(low, t), outputs[1], True),
        Variant(
            "stacked", stacked_param_counts(stacked), stacked_flops(stacked, t), outputs[2], False
        ),
    ]
    return variants, low.singular_values
