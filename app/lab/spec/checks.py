"""The checks of an experiment's values across fields (no Pydantic, no HTTP), written once.

The API's request models (app.api.schemas) call them from their validators and the notebook
API (`app.lab.spec.build_spec`, so `forward_spec`, `perturb_spec` and the teaching builders)
calls them on keyword arguments: both refuse the same values with the same words (a
`ValueError`; a `Refusal` also carries a code), which the API answers with a 422. The checks
of one value (numbers, weights, text) are app.lab.values'. `app.lab.spec.specs` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from app.lab.errors import Refusal
from app.lab.limits import Limits
from app.lab.values import as_float_array, check_max, check_text, check_weights
from app.lab.weight_files import LayerFile
from app.model.ffn import FFNConfig, expected_shapes
from app.services.uploads import upload_store

if TYPE_CHECKING:
    from app.lab.spec.specs import ForwardSpec, PerturbSpec

Array = npt.NDArray[np.float32]

PRETRAINED_D_MODEL = 384
"""d_model of all-MiniLM-L6-v2 (model = 'minilm-l6')."""
PRETRAINED_MODELS = ("minilm-l6",)
PRETRAINED_LAYERS = 6
"""Encoder layers of all-MiniLM-L6-v2."""
PRETRAINED_HEADS = 12
"""Attention heads per layer of all-MiniLM-L6-v2 (its config.json's num_attention_heads)."""


def check_int(field: str, value: Any, low: int, high: int | None = None) -> int:
    """`value` as an int in [low, high] (no upper bound when None), else a ValueError
    naming `field`."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{field} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"at least {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{field} = {value} is not allowed: it must be {allowed}")
    return int(value)


def check_choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    """`value` when it is one of `allowed`, else a ValueError naming `field`."""
    if value not in allowed:
        raise ValueError(f"{field} = {value!r} is not allowed; use one of {', '.join(allowed)}")
    return str(value)


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


def seeded_only_message(model: str) -> str:
    """Why a teaching view refuses the pretrained model (the API's 422 words)."""
    return (
        f"model = {model!r} is not supported here: the teaching views run on seeded "
        "or submitted weights; use /api/forward or /api/perturb for the pretrained layer"
    )


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
    limits: Limits,
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
    check_max("d_model", spec.d_model, limits.max_d_model)
    check_max("d_ff", spec.d_ff, limits.max_d_ff)
    config = spec.ffn_config()
    params = sum(int(np.prod(s)) for s in expected_shapes(config).values())
    if params > limits.max_params:
        raise Refusal(
            "too_many_params",
            f"d_model={spec.d_model}, d_ff={spec.d_ff} ({spec.activation}) needs "
            f"{params:,} parameters; the limit is {limits.max_params:,}",
            d_model=spec.d_model,
            d_ff=spec.d_ff,
            activation=spec.activation,
            params=params,
            limit=limits.max_params,
        )
    if spec.include_weights:
        _check_weights_in_answer(spec.model, params, limits.display_max_values)
    extra: dict[str, Any] = {}
    if tokens is not None and spec.num_tokens is not None:
        raise ValueError("give either tokens or num_tokens, not both")
    if tokens is not None:
        rows = len(tokens)
        if rows > limits.max_tokens:
            raise Refusal(
                "too_many_rows",
                f"number of tokens (rows of tokens) = {rows} is over the limit of "
                f"{limits.max_tokens}",
                count=rows,
                limit=limits.max_tokens,
            )
        array = as_float_array(tokens, "tokens", ndim=2, max_abs=limits.max_abs_value)
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
        check_max("num_tokens", spec.num_tokens, limits.max_tokens)
    if weights is not None:
        extra["weights_arrays"] = check_weights(
            weights, config, limits.max_submitted_weights, limits.max_abs_value
        )
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
    check_text(spec.text, max_chars=limits.max_text_chars)
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
    array = check_delta(delta, width, what, max_abs_value)
    if spec.scale is not None and spec.scale > max_abs_value:
        raise ValueError(f"scale = {spec.scale:g} is over the limit of {max_abs_value:g}")
    return array


def check_delta(
    delta: Any, width: int, what: str = "d_model", max_abs: float = Limits.max_abs_value
) -> Array | None:
    """The nudge `delta` as float32 [width] (None when not given), else a ValueError saying
    it must have `what` = width numbers."""
    if delta is None:
        return None
    array = as_float_array(delta, "delta", ndim=1, max_abs=max_abs)
    if array.shape[0] != width:
        raise ValueError(f"delta has {array.shape[0]} numbers; it must have {what} = {width}")
    return array


def uploaded_weights(weights_id: str, config: FFNConfig) -> dict[str, Array]:
    """The arrays of an uploaded layer (POST /api/weights/upload), checked against `config`.

    Raises:
        ValueError: an unknown (or evicted) id, or a layer whose shapes, gate or biases do
            not fit d_model, d_ff, activation and bias.
    """
    layer = upload_store().get(weights_id)
    if not isinstance(layer, LayerFile):
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
