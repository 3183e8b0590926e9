"""Pydantic v2 request models of the JSON API (responses: `app.api.schemas.responses`).

Orientation is the paper's: `w1 [d_model, d_ff]`, `w2 [d_ff, d_model]`,
`w_gate [d_model, d_ff]`, so `hidden = act(x @ w1 + b1)` (Vaswani et al. 2017, eq. 2).
Every limit comes from `app.config.Settings` and is checked here, before any tensor
of the requested size is allocated; a violation is a 422 whose message names the field,
the value and what is allowed.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from app.api.schemas.values import as_float_array, check_max, check_text, check_weights
from app.config import get_settings
from app.lab.errors import Refusal
from app.lab.spec import (
    PRETRAINED_D_MODEL,
    SEED_MAX,
    ForwardSpec,
    PerturbSpec,
    to_spec,
    uploaded_weights,
)
from app.model.activations import ACTIVATIONS, get_activation
from app.model.ffn import FFNConfig, expected_shapes

Matrix = list[list[float]]
Vector = list[float]


class WeightsIn(BaseModel):
    """User-supplied weights in the paper's orientation; they replace the seeded ones."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    w1: Matrix = Field(description="[d_model, d_ff], the up-projection")
    b1: Vector | None = Field(None, description="[d_ff]; required when bias is true")
    w2: Matrix = Field(description="[d_ff, d_model], the down-projection")
    b2: Vector | None = Field(None, description="[d_model]; required when bias is true")
    w_gate: Matrix | None = Field(None, description="[d_model, d_ff]; required for gated")
    b_gate: Vector | None = Field(None, description="[d_ff]; gated with bias only")


class ForwardRequest(BaseModel):
    """Body of POST /api/forward: an FFN configuration and its input tokens.

    Give either `tokens` (a T x d_model list of numbers) or `num_tokens` + `input_seed`
    (random N(0, 1) tokens); with neither, 8 random tokens are used.
    """

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # "16" is not a number: strings where numbers belong are a 422
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {"d_model": 16, "d_ff": 64, "activation": "relu", "num_tokens": 6, "seed": 0},
                {"model": "minilm-l6", "layer": 2, "text": "The cat sat on the mat."},
            ]
        },
    )

    d_model: int = Field(16, ge=1, description="width of a token vector")
    d_ff: int = Field(64, ge=1, description="width of the hidden layer")
    activation: str = Field(
        "relu", description="activation key", json_schema_extra={"enum": list(ACTIVATIONS)}
    )
    seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds W1, b1, W2, b2 (and W_gate)")
    bias: bool = Field(True, description="linear maps with biases")
    tokens: Matrix | None = Field(None, description="input [T, d_model]")
    num_tokens: int | None = Field(None, ge=1, description="T random tokens when no `tokens`")
    input_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds the random tokens")
    weights: WeightsIn | None = Field(None, description="replace the seeded weights")
    weights_id: str | None = Field(
        None,
        max_length=64,
        description="replace the seeded weights with an uploaded layer's (the id POST "
        "/api/weights/upload answered); d_model, d_ff and bias must be the layer's",
    )
    mode: Literal["eval", "train"] = Field("eval", description="dropout acts in train only")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="dropout probability p")
    dropout_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds the dropout mask")
    sparsity_threshold: float | None = Field(
        None, ge=0.0, le=1e3, description="|h| below this is inactive (smooth activations)"
    )
    include_weights: bool = Field(False, description="return the weights in the response")
    model: Literal["minilm-l6"] | None = Field(
        None,
        description="run a real pretrained layer: 'minilm-l6' (all-MiniLM-L6-v2, 6-layer BERT, "
        "d_model 384, d_ff 1536, GELU) on `text`; d_model, d_ff, activation, bias, seed, "
        "tokens and weights then come from the model",
    )
    layer: int = Field(0, ge=0, le=5, description="which encoder layer's FFN (model only)")
    text: str | None = Field(
        None,
        description="text to tokenise (WordPiece, with [CLS] and [SEP]); model only; "
        "at most max_text_chars characters and max_tokens tokens",
    )
    display: Literal["auto", "full", "top_rms"] = Field(
        "auto",
        description=(
            "'auto': when the answer's [T, n] tensors hold more than `display_max_values` "
            "numbers (setting, 81,920 by default), the widest ones are sent as a window of "
            "consecutive columns (from `unit_start` / `feature_start`), as `reduction` says; "
            "statistics are always computed on the full tensors. 'top_rms': the most active "
            "columns instead of a window. 'full': every tensor is sent whole (LLaMA-7B at "
            "T=32: ~15 MB)"
        ),
    )
    unit_start: int = Field(
        0,
        ge=0,
        le=SEED_MAX,
        description="first hidden unit (d_ff column) of the window shown when an answer is "
        "summarised; moved left when the window would run past the last unit",
    )
    feature_start: int = Field(
        0,
        ge=0,
        le=SEED_MAX,
        description="first feature (d_model column) of the window shown when an answer is "
        "summarised; moved left when the window would run past the last feature",
    )

    _tokens: npt.NDArray[np.float32] | None = PrivateAttr(None)
    _weights: dict[str, npt.NDArray[np.float32]] | None = PrivateAttr(None)

    @field_validator("activation")
    @classmethod
    def _known_activation(cls, value: str) -> str:
        get_activation(value)  # ValueError lists the supported names
        return value

    @model_validator(mode="after")
    def _check_limits_and_shapes(self) -> ForwardRequest:
        settings = get_settings()
        _check_max("d_model", self.d_model, settings.max_d_model)
        _check_max("d_ff", self.d_ff, settings.max_d_ff)
        config = self.ffn_config()
        params = sum(int(np.prod(s)) for s in expected_shapes(config).values())
        if params > settings.max_params:
            raise Refusal(
                "too_many_params",
                f"d_model={self.d_model}, d_ff={self.d_ff} ({self.activation}) needs "
                f"{params:,} parameters; the limit is {settings.max_params:,}",
                d_model=self.d_model,
                d_ff=self.d_ff,
                activation=self.activation,
                params=params,
                limit=settings.max_params,
            )
        if self.include_weights:
            _check_weights_in_answer(self.model, params, settings.display_max_values)
        if self.tokens is not None and self.num_tokens is not None:
            raise ValueError("give either tokens or num_tokens, not both")
        if self.tokens is not None:
            rows = len(self.tokens)
            if rows > settings.max_tokens:
                raise Refusal(
                    "too_many_rows",
                    f"number of tokens (rows of tokens) = {rows} is over the limit of "
                    f"{settings.max_tokens}",
                    count=rows,
                    limit=settings.max_tokens,
                )
            tokens = as_float_array(self.tokens, "tokens", ndim=2)
            if tokens.shape[1] != self.d_model:
                raise Refusal(
                    "tokens_width",
                    f"tokens rows have {tokens.shape[1]} numbers; each must have d_model = "
                    f"{self.d_model}",
                    count=int(tokens.shape[1]),
                    d_model=self.d_model,
                )
            self._tokens = tokens
        elif self.num_tokens is not None:
            _check_max("num_tokens", self.num_tokens, settings.max_tokens)
        if self.weights is not None:
            self._weights = _check_weights(self.weights, config, settings.max_submitted_weights)
        if self.weights_id is not None:
            if self.weights is not None:
                raise ValueError("give either weights or weights_id, not both")
            self._weights = uploaded_weights(self.weights_id, config)
        return self

    @model_validator(mode="before")
    @classmethod
    def _check_pretrained_clashes(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("model") is not None:
            names = ("tokens", "num_tokens", "weights", "weights_id")
            clashes = [n for n in names if data.get(n) is not None]
            if clashes:
                raise ValueError(
                    f"model = {data['model']!r} takes its input from text and its weights from "
                    f"the model; remove {', '.join(clashes)}"
                )
        return data

    @model_validator(mode="after")
    def _check_pretrained(self) -> ForwardRequest:
        if self.model is None:
            if self.text is not None:
                raise ValueError("text needs a pretrained model: add model = 'minilm-l6'")
            return self
        if self.mode != "eval":
            raise ValueError(f"model = {self.model!r} runs in eval mode only, got mode = 'train'")
        if self.text is None:
            raise ValueError(f"model = {self.model!r} needs a text")
        check_text(self.text)
        return self

    def spec(self) -> ForwardSpec:
        """The validated body as the experiments layer's plain `ForwardSpec`."""
        return to_spec(self, ForwardSpec)

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
        """T, the number of tokens this request runs."""
        if self._tokens is not None:
            return int(self._tokens.shape[0])
        return self.num_tokens if self.num_tokens is not None else 8

    @property
    def tokens_array(self) -> npt.NDArray[np.float32] | None:
        """The validated `tokens` as float32 [T, d_model], or None for random tokens."""
        return self._tokens

    @property
    def weights_arrays(self) -> dict[str, npt.NDArray[np.float32]] | None:
        """The validated user weights by name, float32, or None for seeded weights."""
        return self._weights


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


def _check_max(field: str, value: int, limit: int) -> None:
    """A 422 message naming the field, the value and the limit (not the setting's name)."""
    check_max(field, value, limit)


def _check_weights(
    weights: WeightsIn, config: FFNConfig, max_numbers: int
) -> dict[str, npt.NDArray[np.float32]]:
    return check_weights(weights.model_dump(), config, max_numbers)


class PerturbRequest(ForwardRequest):
    """Body of POST /api/perturb: the forward body plus which token to nudge and how.

    Give `delta` (a d_model vector added to the token) or `scale` (the L2 norm of a
    random direction seeded by `direction_seed`); with neither, scale = 1.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "d_model": 16,
                    "d_ff": 64,
                    "activation": "gelu",
                    "num_tokens": 6,
                    "position": 2,
                    "scale": 1.0,
                },
                {
                    "model": "minilm-l6",
                    "layer": 2,
                    "text": "The cat sat on the mat.",
                    "position": 2,
                    "replace_word": "dog",
                },
                {
                    "model": "minilm-l6",
                    "layer": 0,
                    "text": "The cat sat on the mat.",
                    "position": 2,
                    "scale": 2.0,
                },
            ]
        }
    )

    position: int = Field(0, ge=0, description="0-based index of the token to nudge")
    delta: Vector | None = Field(None, description="[d_model] added to tokens[position]")
    scale: float | None = Field(None, ge=0.0, description="L2 norm of a random nudge")
    direction_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds the random direction")
    replace_word: str | None = Field(
        None,
        max_length=50,
        description="model only: put this word (one WordPiece token) at `position` instead "
        "of nudging; the response then also compares the full layer (attention + FFN)",
    )

    _delta: npt.NDArray[np.float32] | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _check_perturbation(self) -> PerturbRequest:
        if self.model is not None:
            return self._check_pretrained_perturbation()
        if self.replace_word is not None:
            raise ValueError("replace_word needs a pretrained model: add model = 'minilm-l6'")
        count = self.token_count
        if self.position >= count:
            raise ValueError(
                f"position = {self.position} is out of range: there are {count} tokens, "
                f"so position must be in [0, {count - 1}]"
            )
        if self.delta is not None and self.scale is not None:
            raise ValueError("give either delta or scale, not both")
        self._check_delta_and_scale(self.d_model, "d_model")
        return self

    def _check_pretrained_perturbation(self) -> PerturbRequest:
        """Model mode: the position is checked against the tokenised text at run time."""
        given = [n for n in ("delta", "scale", "replace_word") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(
                f"give one of delta, scale and replace_word, not {' and '.join(given)}"
            )
        if self.replace_word is not None and not self.replace_word.strip():
            raise ValueError("replace_word must not be empty")
        self._check_delta_and_scale(PRETRAINED_D_MODEL, "the model's d_model")
        return self

    def _check_delta_and_scale(self, width: int, what: str) -> None:
        """`delta` must hold `width` finite numbers; `scale` at most max_abs_value."""
        if self.delta is not None:
            delta = as_float_array(self.delta, "delta", ndim=1)
            if delta.shape[0] != width:
                raise ValueError(
                    f"delta has {delta.shape[0]} numbers; it must have {what} = {width}"
                )
            self._delta = delta
        limit = get_settings().max_abs_value
        if self.scale is not None and self.scale > limit:
            raise ValueError(f"scale = {self.scale:g} is over the limit of {limit:g}")

    def spec(self) -> PerturbSpec:
        """The validated body as the experiments layer's plain `PerturbSpec`."""
        return to_spec(self, PerturbSpec)

    @property
    def delta_array(self) -> npt.NDArray[np.float32] | None:
        """The validated `delta` [d_model], or None for a random direction."""
        return self._delta


class SnapshotRequest(PerturbRequest):
    """Body of POST /api/snapshot: the perturb body plus the language of the titles."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "d_model": 16,
                    "d_ff": 64,
                    "activation": "relu",
                    "num_tokens": 6,
                    "position": 2,
                    "scale": 1.0,
                    "lang": "zh-CN",
                }
            ]
        }
    )

    lang: Literal["en", "zh-CN"] = Field("en", description="language of titles and labels")
