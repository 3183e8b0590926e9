"""The position-wise feed-forward network, FFN(x) = act(x W1 + b1) W2 + b2.

Vaswani et al. 2017, "Attention Is All You Need", section 3.3, eq. 2: the same two
linear maps and activation are applied to every position separately and identically.
Gated variants (SwiGLU, GeGLU; Shazeer 2020) add a third matrix. The field names the three
maps gate / up / down (LLaMA's gate_proj, up_proj, down_proj; Meta's reference code calls
them w1, w3, w2): here gate = `w_gate`, up = `w1`, down = `w2`, also readable as the
properties `gate`, `up`, `down`.

Read `PositionwiseFeedForward` first; its config, weights, seeded initialisation and shape
checks live in `app.model.ffn_weights` (the names stay importable from here).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.model import parallel
from app.model.activations import get_activation
from app.model.ffn_weights import (
    FFNConfig,
    FFNWeights,
    _check_weights,
    _linear_from,
    expected_shapes,
)
from app.model.seeding import generator as stream_generator

__all__ = [
    "FFNConfig",
    "FFNTrace",
    "FFNWeights",
    "PositionwiseFeedForward",
    "SeededDropout",
    "expected_shapes",
]


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = act(x W1 + b1) W2 + b2, applied to each position separately and identically.

    Input `[T, d_model]` or `[B, T, d_model]`; output the same shape. Gated activations
    compute `act(x W_gate + b_gate) * (x W1 + b1)` before W2 (LLaMA's gate/up/down).
    See Vaswani et al. 2017, eq. 2.
    """

    def __init__(self, config: FFNConfig, weights: FFNWeights | None = None, seed: int = 0) -> None:
        """Build the FFN with `weights`, or with `FFNWeights.seeded(..., seed)` when None.

        Raises:
            ValueError: when a weight's shape does not fit the config, or a gated
                activation has no `w_gate`.
        """
        super().__init__()
        self.config = config
        spec = get_activation(config.activation)
        if weights is None:
            weights = FFNWeights.seeded(
                config.d_model, config.d_ff, seed, gated=spec.gated, bias=config.bias
            )
        _check_weights(config, weights)
        self.w1 = _linear_from(weights.w1, weights.b1)
        self.w_gate = _linear_from(weights.w_gate, weights.b_gate) if spec.gated else None
        self.act = spec.factory()
        self.dropout = SeededDropout(config.dropout)
        self.w2 = _linear_from(weights.w2, weights.b2)
        self.requires_grad_(False)

    def trace(self, x: Tensor, dropout_seed: int | None = None) -> FFNTrace:
        """Run the FFN and keep every intermediate tensor (see `FFNTrace`).

        Args:
            x: float32 [T, d_model] or [B, T, d_model].
            dropout_seed: seeds the dropout mask in train mode (its "dropout" stream,
                `app.model.seeding`); ignored in eval mode.
        """
        generator = None if dropout_seed is None else stream_generator(dropout_seed, "dropout")
        if self.w_gate is not None:
            pre_activation, up_ = parallel.linears(x, self.w_gate, self.w1)  # (T, d_ff) x 2
            up: Tensor | None = up_
            hidden = self.act(pre_activation) * up  # (T, d_ff)
        else:
            pre_activation = parallel.linear(x, self.w1)  # (T, d_ff)
            up = None
            hidden = self.act(pre_activation)  # (T, d_ff)
        kept, dropped = self.dropout(hidden, generator)  # (T, d_ff)
        output = parallel.linear(kept, self.w2)  # (T, d_model)
        return FFNTrace(x, pre_activation, up, hidden, dropped, output)

    def forward(self, x: Tensor) -> Tensor:
        """float32 [..., d_model] -> float32 [..., d_model]."""
        return self.trace(x).output

    def weights(self) -> FFNWeights:
        """The parameters in the paper's orientation (views, no copy)."""
        gate = self.w_gate
        return FFNWeights(
            w1=self.w1.weight.T,
            b1=self.w1.bias,
            w2=self.w2.weight.T,
            b2=self.w2.bias,
            w_gate=None if gate is None else gate.weight.T,
            b_gate=None if gate is None else gate.bias,
        )

    @property
    def gate(self) -> nn.Linear | None:
        """The gate projection W_gate of a gated FFN (LLaMA's gate_proj, Meta's w1), else None."""
        return self.w_gate

    @property
    def up(self) -> nn.Linear:
        """The up-projection W1, d_model -> d_ff (LLaMA's up_proj, Meta's w3)."""
        return self.w1

    @property
    def down(self) -> nn.Linear:
        """The down-projection W2, d_ff -> d_model (LLaMA's down_proj, Meta's w2)."""
        return self.w2


@dataclass(frozen=True)
class FFNTrace:
    """Every intermediate tensor of one forward pass (float32; `...` is `[T]` or `[B, T]`).

    Attributes:
        input: [..., d_model], the token vectors x.
        pre_activation: [..., d_ff], x W1 + b1 (for gated variants x W_gate + b_gate).
        up: [..., d_ff], x W1 + b1 for gated variants, else None.
        hidden: [..., d_ff], after the activation (and gating), before dropout.
        dropped: bool [..., d_ff], the units dropout zeroed (train mode), else None.
        output: [..., d_model], the FFN output.
    """

    input: Tensor
    pre_activation: Tensor
    up: Tensor | None
    hidden: Tensor
    dropped: Tensor | None
    output: Tensor


class SeededDropout(nn.Module):
    """Inverted dropout with its own generator: identity in eval mode.

    In train mode each unit is zeroed with probability `p` and the survivors are scaled
    by 1/(1-p) (Srivastava et al. 2014), with the mask drawn from `generator` so that
    the same `dropout_seed` drops the same units (`PositionwiseFeedForward.trace` seeds it
    from the "dropout" stream of `app.model.seeding`).
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(
        self, hidden: Tensor, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """Returns (kept [..., d_ff], dropped bool [..., d_ff] or None in eval mode)."""
        if not self.training or self.p == 0.0:
            return hidden, None
        dropped = torch.rand(hidden.shape, generator=generator) < self.p
        kept = hidden.masked_fill(dropped, 0.0) / (1.0 - self.p)
        return kept, dropped
