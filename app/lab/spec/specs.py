"""What an experiment needs, as plain frozen dataclasses (no Pydantic, no HTTP).

The API's request models (app.api.schemas) validate a JSON body and turn it into one of these
with `req.spec()`; the notebook API builds them from keyword arguments with `forward_spec` /
`perturb_spec`, which run the same checks (app.lab.spec.checks, re-exported here, and
app.lab.values) and raise `ValueError`s with the same words. Attribute names are the
API's: `tokens_array` and `weights_arrays` are the validated float32 `tokens` and `weights`,
`delta_array` the validated `delta`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

import numpy as np
import numpy.typing as npt

from app.lab.limits import Limits
from app.lab.spec.checks import (
    PRETRAINED_D_MODEL,
    PRETRAINED_HEADS,
    PRETRAINED_LAYERS,
    PRETRAINED_MODELS,
    check_bool,
    check_choice,
    check_delta,
    check_forward,
    check_int,
    check_model_clashes,
    check_number,
    check_perturbation,
    seeded_only_message,
    uploaded_weights,
)
from app.model.activations import get_activation
from app.model.ffn import FFNConfig

__all__ = [
    "DISPLAYS",
    "MODES",
    "PRETRAINED_D_MODEL",
    "PRETRAINED_HEADS",
    "PRETRAINED_LAYERS",
    "PRETRAINED_MODELS",
    "SEED_MAX",
    "VARIANTS",
    "AttentionVsFFNSpec",
    "BlockSpec",
    "BudgetSpec",
    "Display",
    "DropoutSpec",
    "ForwardSpec",
    "Mode",
    "PerturbSpec",
    "VariantsSpec",
    "build_spec",
    "check_bool",
    "check_choice",
    "check_delta",
    "check_forward",
    "check_int",
    "check_model_clashes",
    "check_number",
    "check_perturbation",
    "forward_spec",
    "perturb_spec",
    "seeded_only_message",
    "to_spec",
    "uploaded_weights",
]

Array = npt.NDArray[np.float32]

SEED_MAX = 2**31 - 1
Mode = Literal["eval", "train"]
Display = Literal["auto", "full", "top_rms"]
MODES: tuple[str, ...] = get_args(Mode)
DISPLAYS: tuple[str, ...] = get_args(Display)
VARIANTS: tuple[str, ...] = ("relu", "gelu", "silu", "swiglu", "geglu", "geglu_tanh")
"""The activations compared side by side (POST /api/variants), in display order."""


@dataclass(frozen=True, kw_only=True, eq=False)
class ForwardSpec:
    """One FFN run: its shape, weights, input tokens and how the answer is displayed.

    Attributes (the API body's fields, see `ForwardRequest`):
        d_model, d_ff, activation, seed, bias: the FFN (seeded weights unless submitted).
        tokens_array: float32 [T, d_model], or None for `num_tokens` N(0, 1) tokens drawn by
            `input_seed` (8 when both are None).
        weights_arrays: float32 arrays by name (w1 [d_model, d_ff], b1, w2 [d_ff, d_model],
            b2, w_gate, b_gate), paper orientation, or None for seeded weights.
        mode, dropout, dropout_seed: dropout acts in train mode only.
        sparsity_threshold: |h| below this is inactive (None: the server's setting).
        include_weights: return the weights too.
        model, layer, text: a real pretrained layer ('minilm-l6') on a text.
        display, unit_start, feature_start: display summary of big answers.
    """

    d_model: int = 16
    d_ff: int = 64
    activation: str = "relu"
    seed: int = 0
    bias: bool = True
    tokens_array: Array | None = None
    num_tokens: int | None = None
    input_seed: int = 0
    weights_arrays: dict[str, Array] | None = None
    weights_id: str | None = None
    mode: str = "eval"
    dropout: float = 0.0
    dropout_seed: int = 0
    sparsity_threshold: float | None = None
    include_weights: bool = False
    model: str | None = None
    layer: int = 0
    text: str | None = None
    display: str = "auto"
    unit_start: int = 0
    feature_start: int = 0

    def ffn_config(self) -> FFNConfig:
        """The model's shape; dropout applies only in train mode."""
        return FFNConfig(
            d_model=self.d_model,
            d_ff=self.d_ff,
            activation=self.activation,
            bias=self.bias,
            dropout=self.dropout if self.mode == "train" else 0.0,
        )

    @property
    def token_count(self) -> int:
        """T, the number of tokens this run uses."""
        if self.tokens_array is not None:
            return int(self.tokens_array.shape[0])
        return self.num_tokens if self.num_tokens is not None else 8


@dataclass(frozen=True, kw_only=True, eq=False)
class PerturbSpec(ForwardSpec):
    """A forward run plus the nudge of one token (see `PerturbRequest`).

    Attributes:
        position: 0-based index of the token to change.
        delta_array: float32 [d_model] added to that token, or None for a random direction
            of L2 norm `scale` (1 when None) drawn by `direction_seed`.
        replace_word: pretrained model only: put this word at `position` instead.
    """

    position: int = 0
    delta_array: Array | None = None
    scale: float | None = None
    direction_seed: int = 0
    replace_word: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class AttentionVsFFNSpec(PerturbSpec):
    """POST /api/attention-vs-ffn: the nudge, through self-attention and through the FFN."""

    num_heads: int = 1
    attention_seed: int = 0
    influence: bool = True


@dataclass(frozen=True, kw_only=True, eq=False)
class BlockSpec(ForwardSpec):
    """POST /api/block: the FFN sub-layer with its residual and LayerNorm ("post" or "pre")."""

    norm: str = "post"


@dataclass(frozen=True, kw_only=True, eq=False)
class VariantsSpec(ForwardSpec):
    """POST /api/variants: with `match_params`, gated variants get the plain FFN's count."""

    match_params: bool = False


@dataclass(frozen=True, kw_only=True, eq=False)
class BudgetSpec(ForwardSpec):
    """POST /api/budget: parameters and FLOPs against `num_heads`-head attention."""

    num_heads: int = 1


@dataclass(frozen=True, kw_only=True, eq=False)
class DropoutSpec(ForwardSpec):
    """POST /api/dropout: both modes, `dropout` = p, `dropout_seed` the mask."""


S = TypeVar("S", bound=ForwardSpec)


def _numbers(value: Any) -> Any:
    """Tensors and arrays as plain arrays (lists pass through to the value checks)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return value


def forward_spec(limits: Limits | None = None, **body: Any) -> ForwardSpec:
    """A `ForwardSpec` from the keyword arguments of an /api/forward body, checked as the API
    checks it (limits from `limits`, default: the environment's).

    `tokens` and each of `weights` may be nested lists, NumPy arrays or torch tensors.

    Raises:
        TypeError: an argument the API body does not have.
        ValueError: a value the API would refuse with a 422; the message names the field.
    """
    return build_spec(ForwardSpec, limits or Limits(), body)


def perturb_spec(limits: Limits | None = None, **body: Any) -> PerturbSpec:
    """A `PerturbSpec` from the keyword arguments of an /api/perturb body (see
    `forward_spec`); `delta` may be a list, an array or a tensor."""
    return build_spec(PerturbSpec, limits or Limits(), body)


BODY_ONLY = {"tokens", "weights", "delta"}


def to_spec(source: Any, cls: type[S]) -> S:
    """`cls` with every attribute read from `source` (a validated request model)."""
    return cls(**{name: getattr(source, name) for name in cls.__dataclass_fields__})


def build_spec(cls: type[S], limits: Limits, body: dict[str, Any]) -> S:
    """`cls` (a `ForwardSpec` or a subclass) from an API body's keywords, with the forward
    body's checks (and the perturb body's for a `PerturbSpec`); `tokens`, `weights` and,
    when `cls` has `delta_array`, `delta` are read from the body. A subclass's own fields
    are passed through unchecked: its builder checks them (e.g. `stack_spec`).

    Raises:
        TypeError: an argument the API body does not have.
        ValueError: a value the API would refuse with a 422; the message names the field.
    """
    known = set(cls.__dataclass_fields__) - {"tokens_array", "weights_arrays", "delta_array"}
    has_delta = "delta_array" in cls.__dataclass_fields__
    allowed = known | (BODY_ONLY if has_delta else BODY_ONLY - {"delta"})
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise TypeError(f"unexpected argument(s) {', '.join(unknown)}; allowed: {sorted(allowed)}")
    values = {k: v for k, v in body.items() if k in known}
    if body.get("model") is not None:
        check_choice("model", body["model"], PRETRAINED_MODELS)
    check_model_clashes(body)
    for name in ("seed", "input_seed", "dropout_seed"):
        check_int(name, values.get(name, 0), 0, SEED_MAX)
    for name in ("unit_start", "feature_start"):
        check_int(name, values.get(name, 0), 0, SEED_MAX)
    check_choice("mode", values.get("mode", "eval"), MODES)
    check_choice("display", values.get("display", "auto"), DISPLAYS)
    check_int("layer", values.get("layer", 0), 0, PRETRAINED_LAYERS - 1)
    check_int("d_model", values.get("d_model", 16), 1)
    check_int("d_ff", values.get("d_ff", 64), 1)
    get_activation(values.get("activation", "relu"))
    if values.get("num_tokens") is not None:
        check_int("num_tokens", values["num_tokens"], 1)
    spec = cls(**values)
    weights = body.get("weights")
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise ValueError("weights must be a mapping of names (w1, b1, w2, b2, ...) to arrays")
        unknown_weights = sorted(set(weights) - {"w1", "b1", "w2", "b2", "w_gate", "b_gate"})
        if unknown_weights:
            raise ValueError(
                f"weights has unknown name(s) {', '.join(unknown_weights)}; "
                "use w1, b1, w2, b2, w_gate, b_gate"
            )
        weights = {k: _numbers(v) for k, v in weights.items()}
    tokens = body.get("tokens")
    extra = check_forward(spec, None if tokens is None else _numbers(tokens), weights, limits)
    if isinstance(spec, PerturbSpec):
        extra |= _perturbation(spec, body, limits, extra)
    if not extra:
        return spec
    return cls(**(values | extra))


def _perturbation(
    spec: PerturbSpec, body: dict[str, Any], limits: Limits, extra: dict[str, Any]
) -> dict[str, Any]:
    """The perturb body's field bounds, then its own checks (`check_perturbation`)."""
    check_int("position", spec.position, 0)
    check_int("direction_seed", spec.direction_seed, 0, SEED_MAX)
    if spec.scale is not None and spec.scale < 0:
        raise ValueError(f"scale = {spec.scale:g} is not allowed: it must be at least 0")
    tokens = extra.get("tokens_array")
    count = int(tokens.shape[0]) if tokens is not None else spec.token_count
    delta = body.get("delta")
    array = check_perturbation(
        spec, None if delta is None else _numbers(delta), count, limits.max_abs_value
    )
    return {} if array is None else {"delta_array": array}
