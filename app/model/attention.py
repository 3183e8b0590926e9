"""Multi-head self-attention with seeded weights, to contrast with the position-wise FFN.

Vaswani et al. 2017, section 3.2, eq. 1: Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V,
with Q = x W_Q, K = x W_K, V = x W_V split into heads and concatenated before W_O. Every
output row is a weighted sum over all positions: attention mixes tokens, the FFN does not.

Orientation is the paper's (``x @ w_q``), as in `app.model.ffn`; the weights are drawn
like `FFNWeights.seeded` (PyTorch's default `nn.Linear` initialisation under one seeded
`torch.Generator`, from the seed's own "attention" stream, `app.model.seeding`), so the same
seed gives the same attention for a given d_model, independent of the FFN's weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.model import parallel
from app.model.ffn_weights import _linear_from, _linear_init
from app.model.seeding import generator as stream_generator

PROJECTIONS: tuple[str, ...] = ("q", "k", "v", "o")


@dataclass(frozen=True)
class AttentionWeights:
    """The four projections in the paper's orientation (float32 [d_model, d_model] each).

    Attributes:
        w_q, w_k, w_v, w_o: [d_model, d_model].
        b_q, b_k, b_v, b_o: [d_model] or None.
    """

    w_q: Tensor
    b_q: Tensor | None
    w_k: Tensor
    b_k: Tensor | None
    w_v: Tensor
    b_v: Tensor | None
    w_o: Tensor
    b_o: Tensor | None

    @classmethod
    def seeded(
        cls, d_model: int, seed: int, *, bias: bool, stream: str = "attention"
    ) -> AttentionWeights:
        """`nn.Linear`'s default init drawn in the order q, k, v, o (weight then bias each).

        Drawn from the "attention" stream of `seed` (`app.model.seeding.generator`; a stack
        layer's is "layer{i}.attention").
        Biases are drawn even when `bias=False`, so the weights do not depend on it.
        """
        generator = stream_generator(seed, stream)
        drawn = [_linear_init(d_model, d_model, generator) for _ in PROJECTIONS]
        values: dict[str, Tensor | None] = {}
        for name, (w, b) in zip(PROJECTIONS, drawn, strict=True):
            values[f"w_{name}"] = w
            values[f"b_{name}"] = b if bias else None
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AttentionTrace:
    """One self-attention pass.

    Attributes:
        weights: float32 [num_heads, T, T]; row j is the softmax over the positions that
            position j attends to (every row sums to 1).
        output: float32 [T, d_model], after the output projection W_O.
    """

    weights: Tensor
    output: Tensor


class SelfAttention(nn.Module):
    """Unmasked multi-head self-attention on one sequence [T, d_model] (encoder style).

    Args:
        d_model: token width; must be divisible by `num_heads`.
        num_heads: h; each head has d_k = d_model / h.
        seed: seeds W_Q, W_K, W_V, W_O (see `AttentionWeights.seeded`).
        bias: whether the projections have biases.

    Raises:
        ValueError: for non-positive sizes or d_model not divisible by num_heads.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int = 1,
        seed: int = 0,
        bias: bool = True,
        weights: AttentionWeights | None = None,
        stream: str = "attention",
    ) -> None:
        """`weights`, when given, replace the seeded ones (e.g. cached; shapes checked);
        otherwise they are drawn from `stream` of `seed` (see `app.model.seeding`)."""
        super().__init__()
        if d_model < 1 or num_heads < 1:
            raise ValueError(f"d_model and num_heads must be positive, got {d_model}, {num_heads}")
        if d_model % num_heads:
            raise ValueError(
                f"d_model = {d_model} is not divisible by num_heads = {num_heads}; "
                "each head needs d_k = d_model / num_heads"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        if weights is None:
            weights = AttentionWeights.seeded(d_model, seed, bias=bias, stream=stream)
        elif tuple(weights.w_q.shape) != (d_model, d_model):
            raise ValueError(f"w_q has shape {list(weights.w_q.shape)}, expected {d_model}^2")
        self.q = _linear_from(weights.w_q, weights.b_q, parallel.Linear)
        self.k = _linear_from(weights.w_k, weights.b_k, parallel.Linear)
        self.v = _linear_from(weights.w_v, weights.b_v, parallel.Linear)
        self.o = _linear_from(weights.w_o, weights.b_o, parallel.Linear)
        self.requires_grad_(False)

    def _heads(self, x: Tensor) -> Tensor:
        """[T, d_model] -> [h, T, d_k]."""
        return x.view(x.shape[0], self.num_heads, self.d_k).transpose(0, 1)

    def trace(self, x: Tensor) -> AttentionTrace:
        """Attention weights per head and the output, for x float32 [T, d_model]."""
        if x.dim() != 2 or x.shape[1] != self.d_model:
            raise ValueError(f"x must be [T, {self.d_model}], got {list(x.shape)}")
        q = self._heads(self.q(x))  # (h, T, d_k)
        k = self._heads(self.k(x))  # (h, T, d_k)
        v = self._heads(self.v(x))  # (h, T, d_k)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d_k)  # (h, T, T)
        weights = torch.softmax(scores, dim=-1)  # (h, T, T)
        context = weights @ v  # (h, T, d_k)
        concat = context.transpose(0, 1).reshape(x.shape[0], self.d_model)  # (T, d_model)
        output = self.o(concat)  # (T, d_model)
        return AttentionTrace(weights, output)

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> float32 [T, d_model]."""
        return self.trace(x).output

    def weights(self) -> AttentionWeights:
        """The parameters in the paper's orientation (views, no copy)."""
        return AttentionWeights(
            w_q=self.q.weight.T,
            b_q=self.q.bias,
            w_k=self.k.weight.T,
            b_k=self.k.bias,
            w_v=self.v.weight.T,
            b_v=self.v.bias,
            w_o=self.o.weight.T,
            b_o=self.o.bias,
        )
