"""The plumbing under `PositionwiseFeedForward`: its config, its weights, seeded init, checks.

Orientation: the paper's (Vaswani et al. 2017, eq. 2). ``w1`` is ``[d_model, d_ff]`` so that
``x @ w1`` maps a token ``[d_model]`` to ``[d_ff]``. ``torch.nn.Linear`` stores the transpose;
the conversion lives here (`_linear_from`) and nowhere else. Gated layers have a third matrix
``w_gate``: in the field's names gate = ``w_gate``, up = ``w1``, down = ``w2`` (LLaMA's
gate_proj / up_proj / down_proj; Meta's reference code calls them w1 / w3 / w2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import torch
from torch import Tensor, nn

from app.model.activations import get_activation
from app.model.seeding import generator as stream_generator


@dataclass(frozen=True)
class FFNConfig:
    """The shape of one FFN (config as data, like nanoGPT's GPTConfig).

    Attributes:
        d_model: width of a token vector (input and output), e.g. 512.
        d_ff: width of the hidden layer, e.g. 2048 (= 4 d_model in the paper).
        activation: a key of `app.model.ACTIVATIONS`.
        bias: whether the linear maps have biases (LLaMA-style configs have none).
        dropout: probability of zeroing a hidden unit, in train mode only.

    Raises:
        ValueError: for non-positive sizes, an unknown activation, dropout outside [0, 1).
    """

    d_model: int
    d_ff: int
    activation: str = "relu"
    bias: bool = True
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for name in ("d_model", "d_ff"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        get_activation(self.activation)  # raises ValueError naming the supported ones

    @property
    def gated(self) -> bool:
        """True for SwiGLU/GeGLU: three matrices instead of two."""
        return get_activation(self.activation).gated


@dataclass(frozen=True)
class FFNWeights:
    """The parameters of an FFN in the paper's orientation (float32, CPU).

    Attributes:
        w1: [d_model, d_ff], the up-projection ("up" in LLaMA).
        b1: [d_ff] or None.
        w2: [d_ff, d_model], the down-projection ("down" in LLaMA).
        b2: [d_model] or None.
        w_gate: [d_model, d_ff] for gated activations, else None ("gate" in LLaMA).
        b_gate: [d_ff] or None.
    """

    w1: Tensor
    b1: Tensor | None
    w2: Tensor
    b2: Tensor | None
    w_gate: Tensor | None = None
    b_gate: Tensor | None = None

    @classmethod
    def seeded(
        cls,
        d_model: int,
        d_ff: int,
        seed: int,
        *,
        gated: bool,
        bias: bool,
        stream: str = "weights",
    ) -> FFNWeights:
        """Deterministic weights with PyTorch's default `nn.Linear` initialisation.

        Every weight and bias is drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) by one
        `torch.Generator` seeded with `stream_seed(seed, stream)` (`app.model.seeding`;
        stream "weights", or a stack layer's "layer{i}.weights"), in the fixed order w1,
        b1, w2, b2, w_gate, b_gate. The input tokens, dropout mask, attention weights and
        nudge direction have streams of their own, so equal seeds never correlate them.
        Biases are drawn even when `bias=False`, and the gate after the rest, so the same
        `(seed, d_model, d_ff)` gives the same w1, b1, w2, b2 whatever the activation or
        bias setting.

        Raises:
            ValueError: for a negative `seed`.
        """
        generator = stream_generator(seed, stream)
        w1, b1 = _linear_init(d_model, d_ff, generator)
        w2, b2 = _linear_init(d_ff, d_model, generator)
        w_gate = b_gate = None
        if gated:
            w_gate, b_gate = _linear_init(d_model, d_ff, generator)
        return cls(
            w1=w1,
            b1=b1 if bias else None,
            w2=w2,
            b2=b2 if bias else None,
            w_gate=w_gate,
            b_gate=b_gate if bias else None,
        )

    @classmethod
    def from_named(cls, tensors: Mapping[str, Tensor]) -> FFNWeights:
        """Weights from tensors by name (paper orientation, see the class attributes).

        `w1` and `w2` are required; `b1`, `b2`, `w_gate`, `b_gate` are optional and absent
        means None (bias-free LLaMA/T5-style weights carry no biases at all).

        Raises:
            ValueError: when `w1` or `w2` is missing or a name is not a parameter of an FFN.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(tensors) - known)
        if unknown:
            raise ValueError(f"unknown FFN parameter(s) {unknown}; known: {sorted(known)}")
        for name in ("w1", "w2"):
            if name not in tensors:
                raise ValueError(f"{name} is required")
        return cls(**{name: tensors.get(name) for name in known})  # type: ignore[arg-type]

    def named(self) -> dict[str, Tensor]:
        """The tensors that are present, by name (w1, b1, w2, b2, w_gate, b_gate)."""
        out: dict[str, Tensor] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = value
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held by the tensors."""
        return sum(t.numel() * t.element_size() for t in self.named().values())


def _linear_init(fan_in: int, fan_out: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """`nn.Linear.reset_parameters` under a generator; returns (w [fan_in, fan_out], b)."""
    weight = torch.empty(fan_out, fan_in)  # nn.Linear's [out, in]
    nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
    bound = 1.0 / math.sqrt(fan_in)
    bias = torch.empty(fan_out).uniform_(-bound, bound, generator=generator)
    return weight.T, bias  # paper orientation, a view: no copy


def _linear_from(
    weight: Tensor | None, bias: Tensor | None, cls: type[nn.Linear] = nn.Linear
) -> nn.Linear:
    """An `nn.Linear` (or subclass `cls`) around a paper-orientation weight [in, out],
    sharing its storage."""
    if weight is None:
        raise ValueError("weight is missing")
    fan_in, fan_out = weight.shape
    linear: nn.Linear = nn.utils.skip_init(  # type: ignore[no-untyped-call]
        cls, fan_in, fan_out, bias=bias is not None
    )
    linear.weight = nn.Parameter(weight.T, requires_grad=False)
    if bias is not None:
        linear.bias = nn.Parameter(bias, requires_grad=False)
    return linear


def expected_shapes(config: FFNConfig) -> dict[str, tuple[int, ...]]:
    """The shape of each parameter the config needs, in the paper's orientation."""
    d_model, d_ff = config.d_model, config.d_ff
    shapes: dict[str, tuple[int, ...]] = {"w1": (d_model, d_ff), "w2": (d_ff, d_model)}
    if config.bias:
        shapes |= {"b1": (d_ff,), "b2": (d_model,)}
    if config.gated:
        shapes["w_gate"] = (d_model, d_ff)
        if config.bias:
            shapes["b_gate"] = (d_ff,)
    return shapes


def _check_weights(config: FFNConfig, weights: FFNWeights) -> None:
    """Raise ValueError naming the first tensor that is missing or of the wrong shape."""
    given = weights.named()
    for name, shape in expected_shapes(config).items():
        if name not in given:
            raise ValueError(
                f"{name} is required for {config.activation!r} with bias={config.bias}"
            )
        if tuple(given[name].shape) != shape:
            raise ValueError(f"{name} has shape {list(given[name].shape)}, expected {list(shape)}")


def seeded_linear(
    fan_in: int, fan_out: int, seed: int, bias: bool = True, trainable: bool = True
) -> nn.Linear:
    """`nn.Linear(fan_in, fan_out)` with PyTorch's default init drawn from `seed` (as
    `FFNWeights.seeded` draws w1/b1); frozen when not `trainable`."""
    weight, b = _linear_init(fan_in, fan_out, torch.Generator().manual_seed(seed))
    linear = nn.Linear(fan_in, fan_out, bias=bias)
    with torch.no_grad():
        linear.weight.copy_(weight.T)
        if linear.bias is not None:
            linear.bias.copy_(b)
    linear.requires_grad_(trainable)
    return linear
