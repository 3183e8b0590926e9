"""The FFN sub-layer inside its Transformer block: residual connection and LayerNorm.

Post-norm (Vaswani et al. 2017, section 3.1): ``output = LayerNorm(x + FFN(x))``.
Pre-norm (GPT-2, Radford et al. 2019; Xiong et al. 2020): ``output = x + FFN(LayerNorm(x))``.
Either way the FFN output is added to x, so W2 must map d_ff back to d_model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from app.model.ffn import PositionwiseFeedForward

Norm = Literal["post", "pre"]
NORMS: tuple[Norm, ...] = ("post", "pre")


@dataclass(frozen=True)
class BlockTrace:
    """Every step of the FFN sub-layer (float32, all [T, d_model]).

    Attributes:
        input: x, the residual stream entering the sub-layer.
        ffn_input: what the FFN sees: x (post-norm) or LayerNorm(x) (pre-norm).
        ffn_output: FFN(ffn_input).
        residual_sum: x + ffn_output.
        output: LayerNorm(residual_sum) (post-norm) or residual_sum (pre-norm).
        steps: the names above in the order the block computes them, e.g. post-norm
            ("input", "ffn_output", "residual_sum", "output").
    """

    input: Tensor
    ffn_input: Tensor
    ffn_output: Tensor
    residual_sum: Tensor
    output: Tensor
    steps: tuple[str, ...]


class FFNBlock(nn.Module):
    """A residual FFN sub-layer with `torch.nn.LayerNorm(d_model)` before or after it.

    The LayerNorm has its default parameters (gain 1, shift 0, eps 1e-5).

    Raises:
        ValueError: for a `norm` other than "post" or "pre".
    """

    def __init__(self, ffn: PositionwiseFeedForward, norm: str = "post") -> None:
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"unknown norm {norm!r}; supported: {', '.join(NORMS)}")
        self.norm: Norm = "post" if norm == "post" else "pre"
        self.ffn = ffn
        self.layer_norm = nn.LayerNorm(ffn.config.d_model)
        self.requires_grad_(False)

    def trace(self, x: Tensor, dropout_seed: int | None = None) -> BlockTrace:
        """Run the sub-layer on x float32 [T, d_model] and keep each step.

        `dropout_seed` seeds the FFN's dropout mask in train mode (see `SeededDropout`).
        """
        if self.norm == "post":
            ffn_output = self.ffn.trace(x, dropout_seed).output  # (T, d_model)
            residual_sum = x + ffn_output  # (T, d_model)
            output = self.layer_norm(residual_sum)  # (T, d_model)
            steps = ("input", "ffn_output", "residual_sum", "output")
            return BlockTrace(x, x, ffn_output, residual_sum, output, steps)
        normed = self.layer_norm(x)  # (T, d_model)
        ffn_output = self.ffn.trace(normed, dropout_seed).output  # (T, d_model)
        residual_sum = x + ffn_output  # (T, d_model)
        steps = ("input", "ffn_input", "ffn_output", "residual_sum")
        return BlockTrace(x, normed, ffn_output, residual_sum, residual_sum, steps)

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> float32 [T, d_model]."""
        with torch.no_grad():
            return self.trace(x).output
