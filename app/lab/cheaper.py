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
from torch import Tensor, nn

from app.analysis import flop_count, param_counts
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.model.ffn_weights import seeded_linear
from app.model.seeding import stream_seed


class CheaperError(ValueError):
    """A rank or a stack shape that does not fit the FFN."""


class LowRankFFN(nn.Module):
    """act(x U V + b1) W2 + b2 with W1 ~ U V the rank-r truncated SVD of `plain`'s W1.

    Gated activations factor W1 ("up") only; the gate keeps its full W_gate.

    Raises:
        CheaperError: unless 1 <= rank <= min(d_model, d_ff).
    """

    def __init__(self, plain: PositionwiseFeedForward, rank: int) -> None:
        super().__init__()
        config = plain.config
        if not 1 <= rank <= min(config.d_model, config.d_ff):
            raise CheaperError(
                f"rank must be in [1, {min(config.d_model, config.d_ff)}] (at most "
                f"min(d_model, d_ff)), got {rank}"
            )
        self.config = config
        self.rank = rank
        weights = plain.weights()
        left, singular, right_t = torch.linalg.svd(weights.w1.double(), full_matrices=False)
        root = singular[:rank].sqrt()
        self.u = (left[:, :rank] * root).float()  # (d_model, r)
        self.v = (root[:, None] * right_t[:rank]).float()  # (r, d_ff)
        self.singular_values = singular.float()  # (min(d_model, d_ff),)
        self.plain = plain

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> [T, d_model]."""
        w = self.plain.weights()
        up = (x @ self.u) @ self.v  # (T, d_ff)
        if w.b1 is not None:
            up = up + w.b1
        if w.w_gate is not None:
            gate = x @ w.w_gate + (w.b_gate if w.b_gate is not None else 0.0)  # (T, d_ff)
            hidden = self.plain.act(gate) * up  # (T, d_ff)
        else:
            hidden = self.plain.act(up)  # (T, d_ff)
        out: Tensor = hidden @ w.w2  # (T, d_model)
        if w.b2 is not None:
            out = out + w.b2
        return out

    def param_counts(self) -> dict[str, int]:
        """u, v in place of w1; the rest as the plain FFN; and total."""
        counts = {k: v for k, v in param_counts(self.config).items() if k not in ("w1", "total")}
        counts = {"u": self.u.numel(), "v": self.v.numel(), **counts}
        counts["total"] = sum(counts.values())
        return counts

    def flops(self, num_tokens: int) -> int:
        """FLOPs of one pass: the plain FFN's, with 2 T (d_model r + r d_ff) for x U V."""
        plain = flop_count(self.config, num_tokens)
        d_model, d_ff, t = self.config.d_model, self.config.d_ff, num_tokens
        w1_flops = 2 * t * d_model * d_ff
        return plain.total - w1_flops + 2 * t * (d_model * self.rank + self.rank * d_ff)


class StackedFFN(nn.Module):
    """MobileBERT-style: x -> x W_in -> F times (h <- h + FFN_k(h)) -> h W_out.

    Args:
        d_model: input and output width.
        d_inner: the bottleneck width (MobileBERT-TINY/base: 128 inside 512).
        num_ffns: F, the stacked FFNs (MobileBERT: 4).
        activation, bias: as the plain FFN's.
        seed: the user's seed (streams "stacked.in", "stacked.ffn{k}", "stacked.out").

    Raises:
        CheaperError: for d_inner or num_ffns < 1.
    """

    def __init__(
        self, d_model: int, d_inner: int, num_ffns: int, activation: str, bias: bool, seed: int
    ) -> None:
        super().__init__()
        if d_inner < 1 or num_ffns < 1:
            raise CheaperError(
                f"d_inner and num_ffns must be at least 1, got {d_inner} and {num_ffns}"
            )
        self.d_model = d_model
        self.d_inner = d_inner
        self.small = FFNConfig(d_inner, 4 * d_inner, activation, bias)
        self.down = seeded_linear(
            d_model, d_inner, stream_seed(seed, "stacked.in"), bias, trainable=False
        )
        self.ffns = nn.ModuleList(
            PositionwiseFeedForward(
                self.small,
                FFNWeights.seeded(
                    d_inner,
                    4 * d_inner,
                    seed,
                    gated=self.small.gated,
                    bias=bias,
                    stream=f"stacked.ffn{k}",
                ),
            )
            for k in range(num_ffns)
        )
        self.up = seeded_linear(
            d_inner, d_model, stream_seed(seed, "stacked.out"), bias, trainable=False
        )
        self.bias = bias

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> [T, d_model]."""
        h = self.down(x)  # (T, d_inner)
        for ffn in self.ffns:
            h = h + ffn(h)  # (T, d_inner)
        out: Tensor = self.up(h)  # (T, d_model)
        return out

    def param_counts(self) -> dict[str, int]:
        """bottleneck_in, ffns (all F), bottleneck_out, and total."""
        bias = 1 if self.bias else 0
        down = self.d_model * self.d_inner + bias * self.d_inner
        up = self.d_inner * self.d_model + bias * self.d_model
        ffns = len(self.ffns) * param_counts(self.small)["total"]
        return {
            "bottleneck_in": down,
            "ffns": ffns,
            "bottleneck_out": up,
            "total": down + ffns + up,
        }

    def flops(self, num_tokens: int) -> int:
        """FLOPs of one pass: both projections, F small FFNs and F residual adds."""
        t, bias = num_tokens, 1 if self.bias else 0
        projections = 2 * t * self.d_model * self.d_inner * 2
        biases = bias * t * (self.d_inner + self.d_model)
        small = len(self.ffns) * (flop_count(self.small, t).total + t * self.d_inner)
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
        Variant("low_rank", low.param_counts(), low.flops(t), outputs[1], True),
        Variant("stacked", stacked.param_counts(), stacked.flops(t), outputs[2], False),
    ]
    return variants, low.singular_values
