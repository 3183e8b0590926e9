"""What an experiment needs, as plain frozen dataclasses (no Pydantic, no HTTP).

The API's request models (app.api.schemas) validate a JSON body and turn it into one of these
with `req.spec()`; the notebook API builds them from keyword arguments with `forward_spec` /
`perturb_spec`, which run the same value checks (app.lab.values) and raise `ValueError`s with
the same words. Attribute names are the API's: `tokens_array` and `weights_arrays` are the
validated float32 `tokens` and `weights`, `delta_array` the validated `delta`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

import numpy as np
import numpy.typing as npt

from app.config import Settings, get_settings
from app.lab.errors import Refusal
from app.lab.values import as_float_array, check_max, check_text, check_weights
from app.model.activations import get_activation
from app.model.ffn import FFNConfig, expected_shapes

Array = npt.NDArray[np.float32]

SEED_MAX = 2**31 - 1
PRETRAINED_D_MODEL = 384
"""d_model of all-MiniLM-L6-v2 (model = 'minilm-l6')."""
PRETRAINED_MODELS = ("minilm-l6",)
PRETRAINED_LAYERS = 6
"""Encoder layers of all-MiniLM-L6-v2."""
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


def _int(field: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{field} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"at least {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{field} = {value} is not allowed: it must be {allowed}")
    return int(value)


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{field} = {value!r} is not allowed; use one of {', '.join(allowed)}")
    return str(value)


def _numbers(value: Any) -> Any:
    """Tensors and arrays as plain arrays (lists pass through to the value checks)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return value


def forward_spec(settings: Settings | None = None, **body: Any) -> ForwardSpec:
    """A `ForwardSpec` from the keyword arguments of an /api/forward body, checked as the API
    checks it (limits from `settings`, default: the environment's).

    `tokens` and each of `weights` may be nested lists, NumPy arrays or torch tensors.

    Raises:
        TypeError: an argument the API body does not have.
        ValueError: a value the API would refuse with a 422; the message names the field.
    """
    return build_spec(ForwardSpec, settings or get_settings(), body)


def perturb_spec(settings: Settings | None = None, **body: Any) -> PerturbSpec:
    """A `PerturbSpec` from the keyword arguments of an /api/perturb body (see
    `forward_spec`); `delta` may be a list, an array or a tensor."""
    return build_spec(PerturbSpec, settings or get_settings(), body)


BODY_ONLY = {"tokens", "weights", "delta"}


def to_spec(source: Any, cls: type[S]) -> S:
    """`cls` with every attribute read from `source` (a validated request model)."""
    return cls(**{name: getattr(source, name) for name in cls.__dataclass_fields__})


def build_spec(cls: type[S], settings: Settings, body: dict[str, Any]) -> S:
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
        _choice("model", body["model"], PRETRAINED_MODELS)
    check_model_clashes(body)
    for name in ("seed", "input_seed", "dropout_seed"):
        _int(name, values.get(name, 0), 0, SEED_MAX)
    for name in ("unit_start", "feature_start"):
        _int(name, values.get(name, 0), 0, SEED_MAX)
    _choice("mode", values.get("mode", "eval"), MODES)
    _choice("display", values.get("display", "auto"), DISPLAYS)
    _int("layer", values.get("layer", 0), 0, PRETRAINED_LAYERS - 1)
    _int("d_model", values.get("d_model", 16), 1)
    _int("d_ff", values.get("d_ff", 64), 1)
    get_activation(values.get("activation", "relu"))
    if values.get("num_tokens") is not None:
        _int("num_tokens", values["num_tokens"], 1)
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
    extra = check_forward(spec, None if tokens is None else _numbers(tokens), weights, settings)
    if isinstance(spec, PerturbSpec):
        extra |= _perturbation(spec, body, settings, extra)
    if not extra:
        return spec
    return cls(**(values | extra))


def seeded_only_message(model: str) -> str:
    """Why a teaching view refuses the pretrained model (the API's 422 words)."""
    return (
        f"model = {model!r} is not supported here: the teaching views run on seeded "
        "or submitted weights; use /api/forward or /api/perturb for the pretrained layer"
    )


def check_int(field: str, value: Any, low: int, high: int | None = None) -> int:
    """`value` as an int in [low, high] (no upper bound when None), else a ValueError
    naming `field`."""
    return _int(field, value, low, high)


def check_choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    """`value` when it is one of `allowed`, else a ValueError naming `field`."""
    return _choice(field, value, allowed)


def check_bool(field: str, value: Any) -> bool:
    """`value` when it is a bool (the API is strict: 1 is not true), else a ValueError."""
    if not isinstance(value, bool):
        raise ValueError(f"{field} must be true or false, got {value!r}")
    return value


def check_number(field: str, value: Any, low: float) -> float:
    """`value` as a finite float of at least `low`, else a ValueError naming `field`."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{field} must be a number, got {value!r}")
    if not np.isfinite(value) or value < low:
        raise ValueError(f"{field} = {value!r} is not allowed: it must be at least {low:g}")
    return float(value)


def _perturbation(
    spec: PerturbSpec, body: dict[str, Any], settings: Settings, extra: dict[str, Any]
) -> dict[str, Any]:
    """The perturb body's field bounds, then its own checks (`check_perturbation`)."""
    _int("position", spec.position, 0)
    _int("direction_seed", spec.direction_seed, 0, SEED_MAX)
    if spec.scale is not None and spec.scale < 0:
        raise ValueError(f"scale = {spec.scale:g} is not allowed: it must be at least 0")
    tokens = extra.get("tokens_array")
    count = int(tokens.shape[0]) if tokens is not None else spec.token_count
    delta = body.get("delta")
    array = check_perturbation(
        spec, None if delta is None else _numbers(delta), count, settings.max_abs_value
    )
    return {} if array is None else {"delta_array": array}


def check_model_clashes(body: Mapping[str, Any]) -> None:
    """With `model`, the body gives no tokens, num_tokens, weights or weights_id (checked
    on the raw body, before any other check, as the API does)."""
    model = body.get("model")
    if model is None:
        return
    names = ("tokens", "num_tokens", "weights", "weights_id")
    clashes = [n for n in names if body.get(n) is not None]
    if clashes:
        raise ValueError(
            f"model = {model!r} takes its input from text and its weights from "
            f"the model; remove {', '.join(clashes)}"
        )


def check_forward(
    spec: ForwardSpec,
    tokens: Any,
    weights: Mapping[str, Any] | None,
    settings: Settings,
) -> dict[str, Any]:
    """The forward body's checks across fields (the one place they live: `ForwardRequest`'s
    validator and `forward_spec` both call it), in the order the API reports them.

    `tokens` (rows of numbers) and `weights` (arrays by name, None = absent) are the body's;
    returns the validated `tokens_array` and `weights_arrays` that were given.

    Raises:
        ValueError: the 422's words: sizes over the limits, the parameter count, weights
            too big for an answer, tokens or weights of the wrong shape, an unknown
            weights_id, and the pretrained model's needs (text, eval mode).
    """
    check_max("d_model", spec.d_model, settings.max_d_model)
    check_max("d_ff", spec.d_ff, settings.max_d_ff)
    config = spec.ffn_config()
    params = sum(int(np.prod(s)) for s in expected_shapes(config).values())
    if params > settings.max_params:
        raise Refusal(
            "too_many_params",
            f"d_model={spec.d_model}, d_ff={spec.d_ff} ({spec.activation}) needs "
            f"{params:,} parameters; the limit is {settings.max_params:,}",
            d_model=spec.d_model,
            d_ff=spec.d_ff,
            activation=spec.activation,
            params=params,
            limit=settings.max_params,
        )
    if spec.include_weights:
        _check_weights_in_answer(spec.model, params, settings.display_max_values)
    extra: dict[str, Any] = {}
    if tokens is not None and spec.num_tokens is not None:
        raise ValueError("give either tokens or num_tokens, not both")
    if tokens is not None:
        rows = len(tokens)
        if rows > settings.max_tokens:
            raise Refusal(
                "too_many_rows",
                f"number of tokens (rows of tokens) = {rows} is over the limit of "
                f"{settings.max_tokens}",
                count=rows,
                limit=settings.max_tokens,
            )
        array = as_float_array(tokens, "tokens", ndim=2)
        if array.shape[1] != spec.d_model:
            raise Refusal(
                "tokens_width",
                f"tokens rows have {array.shape[1]} numbers; each must have d_model = "
                f"{spec.d_model}",
                count=int(array.shape[1]),
                d_model=spec.d_model,
            )
        extra["tokens_array"] = array
    elif spec.num_tokens is not None:
        check_max("num_tokens", spec.num_tokens, settings.max_tokens)
    if weights is not None:
        extra["weights_arrays"] = check_weights(weights, config, settings.max_submitted_weights)
    if spec.weights_id is not None:
        if weights is not None:
            raise ValueError("give either weights or weights_id, not both")
        extra["weights_arrays"] = uploaded_weights(spec.weights_id, config)
    if spec.model is None:
        if spec.text is not None:
            raise ValueError("text needs a pretrained model: add model = 'minilm-l6'")
        return extra
    if spec.mode != "eval":
        raise ValueError(f"model = {spec.model!r} runs in eval mode only, got mode = 'train'")
    if spec.text is None:
        raise ValueError(f"model = {spec.model!r} needs a text")
    check_text(spec.text)
    return extra


def _check_weights_in_answer(model: str | None, params: int, limit: int) -> None:
    """include_weights is refused (422) when the weights would make the answer big: more
    than `limit` numbers (the display budget of one answer, about 1 MB as JSON)."""
    if model is not None:  # the pretrained FFN layer: W1, b1, W2, b2 of width 384 -> 1536
        d = PRETRAINED_D_MODEL
        params = 2 * d * 4 * d + 4 * d + d
    if params > limit:
        raise ValueError(
            f"include_weights = true: this FFN has {params:,} weights and biases, but an "
            f"answer carries at most {limit:,} numbers (about 1 MB). Seeded weights are "
            "rebuilt exactly from the seed (the page's PyTorch export does it); ask for "
            "include_weights only for smaller sizes."
        )


def check_perturbation(
    spec: PerturbSpec, delta: Any, count: int, max_abs_value: float
) -> Array | None:
    """The perturb body's checks across fields (`PerturbRequest`'s validator and
    `perturb_spec` both call it); `count` is T; returns the validated `delta` or None.

    Raises:
        ValueError: the 422's words (position out of range, delta and scale together,
            delta of the wrong width, scale over the limit, replace_word without a model).
    """
    if spec.model is not None:
        given = [
            n
            for n, v in (
                ("delta", delta),
                ("scale", spec.scale),
                ("replace_word", spec.replace_word),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise ValueError(
                f"give one of delta, scale and replace_word, not {' and '.join(given)}"
            )
        if spec.replace_word is not None and not spec.replace_word.strip():
            raise ValueError("replace_word must not be empty")
        width, what = PRETRAINED_D_MODEL, "the model's d_model"
    else:
        if spec.replace_word is not None:
            raise ValueError("replace_word needs a pretrained model: add model = 'minilm-l6'")
        if spec.position >= count:
            raise ValueError(
                f"position = {spec.position} is out of range: there are {count} tokens, "
                f"so position must be in [0, {count - 1}]"
            )
        if delta is not None and spec.scale is not None:
            raise ValueError("give either delta or scale, not both")
        width, what = spec.d_model, "d_model"
    array = check_delta(delta, width, what)
    if spec.scale is not None and spec.scale > max_abs_value:
        raise ValueError(f"scale = {spec.scale:g} is over the limit of {max_abs_value:g}")
    return array


def check_delta(delta: Any, width: int, what: str = "d_model") -> Array | None:
    """The nudge `delta` as float32 [width] (None when not given), else a ValueError saying
    it must have `what` = width numbers."""
    if delta is None:
        return None
    array = as_float_array(delta, "delta", ndim=1)
    if array.shape[0] != width:
        raise ValueError(f"delta has {array.shape[0]} numbers; it must have {what} = {width}")
    return array


def uploaded_weights(weights_id: str, config: FFNConfig) -> dict[str, Array]:
    """The arrays of an uploaded layer (POST /api/weights/upload), checked against `config`.

    Raises:
        ValueError: an unknown (or evicted) id, or a layer whose shapes, gate or biases do
            not fit d_model, d_ff, activation and bias.
    """
    from app.services.uploads import upload_store  # the store imports app.lab modules

    layer = upload_store().get(weights_id)
    if layer is None:
        raise ValueError(
            f"weights_id = {weights_id!r} is not a layer this server holds (uploads are kept "
            "while the server runs, the least recently used dropped first): upload the file again"
        )
    if (layer.d_model, layer.d_ff) != (config.d_model, config.d_ff):
        raise ValueError(
            f"the uploaded layer is d_model = {layer.d_model}, d_ff = {layer.d_ff}; set "
            f"d_model and d_ff to those (got {config.d_model}, {config.d_ff})"
        )
    if layer.gated != config.gated:
        kind = "gated (gate/up/down)" if layer.gated else "not gated (two matrices)"
        raise ValueError(
            f"the uploaded layer is {kind}; activation {config.activation!r} does not fit "
            f"(the {layer.family} family uses {layer.activation!r})"
        )
    if layer.bias != config.bias:
        has = "has biases" if layer.bias else "has no biases"
        raise ValueError(f"the uploaded layer {has}: set bias = {str(layer.bias).lower()}")
    return dict(layer.weights)
