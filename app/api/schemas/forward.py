"""Pydantic v2 request models of the JSON API (responses: `app.api.schemas.responses`).

Orientation is the paper's: `w1 [d_model, d_ff]`, `w2 [d_ff, d_model]`,
`w_gate [d_model, d_ff]`, so `hidden = act(x @ w1 + b1)` (Vaswani et al. 2017, eq. 2).
Every limit comes from `app.config.Settings` and is checked here, before any tensor
of the requested size is allocated; a violation is a 422 whose message names the field,
the value and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from app.api.deps import lab_limits
from app.api.schemas.values import ParsedMatrix, ParsedVector, check_max, known_activation
from app.config import get_settings
from app.lab.spec.specs import (
    PRETRAINED_LAYERS,
    SEED_MAX,
    Display,
    ForwardSpec,
    Mode,
    PerturbSpec,
    check_forward,
    check_model_clashes,
    check_perturbation,
    to_spec,
)
from app.model.activations import ACTIVATIONS
from app.model.ffn import FFNConfig

Matrix = list[list[float]]
Vector = list[float]


class WeightsIn(BaseModel):
    """User-supplied weights in the paper's orientation; they replace the seeded ones."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    w1: ParsedMatrix = Field(description="[d_model, d_ff], the up-projection")
    b1: ParsedVector | None = Field(None, description="[d_ff]; required when bias is true")
    w2: ParsedMatrix = Field(description="[d_ff, d_model], the down-projection")
    b2: ParsedVector | None = Field(None, description="[d_model]; required when bias is true")
    w_gate: ParsedMatrix | None = Field(None, description="[d_model, d_ff]; required for gated")
    b_gate: ParsedVector | None = Field(None, description="[d_ff]; gated with bias only")

    def given(self) -> dict[str, Any]:
        """The weights by name (lists, or arrays read by `app.api.array_body`)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


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
    tokens: ParsedMatrix | None = Field(None, description="input [T, d_model]")
    num_tokens: int | None = Field(None, ge=1, description="T random tokens when no `tokens`")
    input_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds the random tokens")
    weights: WeightsIn | None = Field(None, description="replace the seeded weights")
    weights_id: str | None = Field(
        None,
        max_length=64,
        description="replace the seeded weights with an uploaded layer's (the id POST "
        "/api/weights/upload answered); d_model, d_ff and bias must be the layer's",
    )
    mode: Mode = Field("eval", description="dropout acts in train only")
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
    layer: int = Field(
        0, ge=0, le=PRETRAINED_LAYERS - 1, description="which encoder layer's FFN (model only)"
    )
    text: str | None = Field(
        None,
        description="text to tokenise (WordPiece, with [CLS] and [SEP]); model only; "
        "at most max_text_chars characters and max_tokens tokens",
    )
    display: Display = Field(
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

    array_fields: ClassVar[Mapping[str, int]] = {
        "tokens": 2,
        **{f"weights.{name}": 2 if name.startswith("w") else 1 for name in WeightsIn.model_fields},
    }
    """Fields (path -> dimensions) a large body's reader may give as arrays
    (`app.api.array_body`); `ParsedMatrix` and `ParsedVector` take them."""

    _tokens: npt.NDArray[np.float32] | None = PrivateAttr(None)
    _weights: dict[str, npt.NDArray[np.float32]] | None = PrivateAttr(None)

    _known_activation = field_validator("activation")(known_activation)

    @model_validator(mode="after")
    def _check_limits_and_shapes(self) -> ForwardRequest:
        weights = None if self.weights is None else self.weights.given()
        extra = check_forward(self.spec(), self.tokens, weights, lab_limits(get_settings()))
        self._tokens = extra.get("tokens_array")
        self._weights = extra.get("weights_arrays")
        return self

    @model_validator(mode="before")
    @classmethod
    def _check_pretrained_clashes(cls, data: Any) -> Any:
        if isinstance(data, dict):
            check_model_clashes(data)
        return data

    def spec(self) -> ForwardSpec:
        """The validated body as the experiments layer's plain `ForwardSpec`."""
        return to_spec(self, ForwardSpec)

    def ffn_config(self) -> FFNConfig:
        """The model's shape; dropout applies only in train mode (`ForwardSpec.ffn_config`)."""
        return to_spec(self, ForwardSpec).ffn_config()

    @property
    def token_count(self) -> int:
        """T, the number of tokens this request runs (`ForwardSpec.token_count`)."""
        return to_spec(self, ForwardSpec).token_count

    @property
    def tokens_array(self) -> npt.NDArray[np.float32] | None:
        """The validated `tokens` as float32 [T, d_model], or None for random tokens."""
        return self._tokens

    @property
    def weights_arrays(self) -> dict[str, npt.NDArray[np.float32]] | None:
        """The validated user weights by name, float32, or None for seeded weights."""
        return self._weights


def _check_max(field: str, value: int, limit: int) -> None:
    """A 422 message naming the field, the value and the limit (not the setting's name)."""
    check_max(field, value, limit)


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
        settings = get_settings()
        self._delta = check_perturbation(
            self.spec(), self.delta, self.token_count, settings.max_abs_value
        )
        return self

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
