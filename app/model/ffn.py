"""The position-wise feed-forward network (Vaswani et al. 2017, section 3.3, eq. 2).

    plain:  FFN(x) = w_2(act(w_1(x)))              = act(x W1 + b1) W2 + b2
    gated:  FFN(x) = down(act(gate(x)) * up(x))    (SwiGLU, GeGLU; Shazeer 2020)

The same maps are applied to every position (token) separately and identically.
`FeedForward` (the course's class) and `GatedFeedForward` (LLaMA's names) are the whole
computation. `PositionwiseFeedForward` is the FFN the app runs: the same maps with seeded or
given weights, seeded dropout, and every intermediate tensor kept (`trace`). How its
`trace` computes is chosen outside it, from `FFN_EXECUTORS`: "eager" (`eager_trace`, below)
unless a caller installs another (the server installs "fast", `app.model.fast_ffn`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.model.activations import get_activation
from app.model.ffn_weights import FFNConfig, FFNWeights, _check_weights, _linear_from
from app.model.ffn_weights import expected_shapes as expected_shapes
from app.model.seeding import generator as stream_generator


class FeedForward(nn.Module):
    """The course's FFN, as The Annotated Transformer writes its `PositionwiseFeedForward`:
    w_1 (d_model -> d_ff), an activation, dropout, w_2 (d_ff -> d_model)."""

    def __init__(self, d_model: int, d_ff: int, act: nn.Module, dropout: float = 0.0) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.act = act
        self.dropout = nn.Dropout(dropout)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        h = self.w_1(x)  # (T, d_ff)
        h = self.act(h)  # (T, d_ff)
        h = self.dropout(h)  # (T, d_ff)
        y: Tensor = self.w_2(h)  # (T, d_model)
        return y


class GatedFeedForward(nn.Module):
    """A gated FFN with LLaMA's names (`LlamaMLP`): down(act(gate(x)) * up(x))."""

    def __init__(self, d_model: int, d_ff: int, act: nn.Module, bias: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=bias)
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.act = act
        self.down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: Tensor) -> Tensor:
        g = self.gate(x)  # (T, d_ff)
        u = self.up(x)  # (T, d_ff)
        h = self.act(g) * u  # (T, d_ff)
        y: Tensor = self.down(h)  # (T, d_model)
        return y


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = act(x W1 + b1) W2 + b2, applied to each position separately and identically.

    Input `[T, d_model]` or `[B, T, d_model]`; output the same shape. Its maps are plain
    `nn.Linear`s named as the API names the weights: `w1` (up; the course's w_1), `w2`
    (down; w_2) and, for gated activations, `w_gate` (gate), also readable as the properties
    `up`, `down`, `gate`. Gated: `act(x W_gate + b_gate) * (x W1 + b1)` before W2.
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

    def forward(self, x: Tensor) -> Tensor:
        """float32 [..., d_model] -> float32 [..., d_model] (`trace(x).output`)."""
        return self.trace(x).output

    def trace(self, x: Tensor, dropout_seed: int | None = None) -> FFNTrace:
        """Run the FFN and keep every intermediate tensor (see `FFNTrace`), with the
        executor in use (`use_executor`; "eager" unless a caller installed another).

        Args:
            x: float32 [T, d_model] or [B, T, d_model].
            dropout_seed: seeds the dropout mask in train mode (its "dropout" stream,
                `app.model.seeding`); ignored in eval mode.
        """
        return FFN_EXECUTORS[_executor](self, x, dropout_seed)

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

    def plain(self) -> FeedForward | GatedFeedForward:
        """This FFN as `FeedForward` or `GatedFeedForward`, sharing its maps (eval mode,
        dropout left out): the readable form computes the very same numbers as
        `eager_trace`."""
        d_model, d_ff = self.config.d_model, self.config.d_ff
        with torch.device("meta"):  # the maps are replaced by this FFN's: allocate none
            plain = FeedForward(d_model, d_ff, self.act)
            gated = GatedFeedForward(d_model, d_ff, self.act)
        if self.w_gate is None:
            plain.w_1, plain.w_2 = self.w1, self.w2
            return plain.eval()
        gated.gate, gated.up, gated.down = self.w_gate, self.w1, self.w2
        return gated.eval()

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


def eager_trace(
    ffn: PositionwiseFeedForward, x: Tensor, dropout_seed: int | None = None
) -> FFNTrace:
    """`ffn` on x float32 [..., d_model], one operation per line, each map a plain call of
    its `nn.Linear` (hooks see every call). The reference every executor must match."""
    generator = None if dropout_seed is None else stream_generator(dropout_seed, "dropout")
    up: Tensor | None = None
    if ffn.w_gate is not None:
        pre_activation = ffn.w_gate(x)  # (T, d_ff)
        up = ffn.w1(x)  # (T, d_ff)
        hidden = ffn.act(pre_activation) * up  # (T, d_ff)
    else:
        pre_activation = ffn.w1(x)  # (T, d_ff)
        hidden = ffn.act(pre_activation)  # (T, d_ff)
    kept, dropped = ffn.dropout(hidden, generator)  # (T, d_ff)
    output = ffn.w2(kept)  # (T, d_model)
    return FFNTrace(x, pre_activation, up, hidden, dropped, kept, output)


FFNExecutor = Callable[[PositionwiseFeedForward, Tensor, "int | None"], "FFNTrace"]
"""(ffn, x, dropout_seed) -> FFNTrace: one way to compute `PositionwiseFeedForward.trace`."""

FFN_EXECUTORS: dict[str, FFNExecutor] = {"eager": eager_trace}
"""Executors by name (as transformers' ALL_ATTENTION_FUNCTIONS): "eager" here; others are
registered by the modules that define them (`app.model.fast_ffn` adds "fast")."""

_executor = "eager"


def use_executor(name: str) -> None:
    """Compute every `PositionwiseFeedForward.trace` (and call) with `FFN_EXECUTORS[name]`
    from now on, in every thread.

    Raises:
        ValueError: for a name that is not registered, listing the registered ones.
    """
    global _executor
    if name not in FFN_EXECUTORS:
        raise ValueError(f"unknown FFN executor {name!r}; registered: {sorted(FFN_EXECUTORS)}")
    _executor = name


def executor() -> str:
    """The name of the executor in use."""
    return _executor


@dataclass(frozen=True)
class FFNTrace:
    """Every intermediate tensor of one forward pass (float32; `...` is `[T]` or `[B, T]`).

    Attributes:
        input: [..., d_model], the token vectors x.
        pre_activation: [..., d_ff], x W1 + b1 (for gated variants x W_gate + b_gate).
        up: [..., d_ff], x W1 + b1 for gated variants, else None.
        hidden: [..., d_ff], after the activation (and gating), before dropout.
        dropped: bool [..., d_ff], the units dropout zeroed (train mode), else None.
        kept: [..., d_ff], what W2 receives: `hidden` after dropout (the same tensor as
            `hidden` in eval mode).
        output: [..., d_model], the FFN output.
    """

    input: Tensor
    pre_activation: Tensor
    up: Tensor | None
    hidden: Tensor
    dropped: Tensor | None
    kept: Tensor
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


__all__ = [
    "FFN_EXECUTORS",
    "FFNConfig",
    "FFNExecutor",
    "FFNTrace",
    "FFNWeights",
    "FeedForward",
    "GatedFeedForward",
    "PositionwiseFeedForward",
    "SeededDropout",
    "eager_trace",
    "executor",
    "expected_shapes",
    "use_executor",
]
