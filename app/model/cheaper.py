"""Cheaper FFNs as modules: a low-rank FFN (W1 factored through rank r by its truncated SVD)
and MobileBERT's stacked FFNs (Sun et al. 2020). Measured against the plain FFN, with their
parameter and FLOP counts, by `app.lab.cheaper.compare`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

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


# END
