"""Pydantic models of the pretrained-model endpoints: models, tokenize and the neuron view."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.schemas.forward import Vector


class ModelOut(BaseModel):
    """A pretrained model FFN Lab can run, and whether its weights are installed."""

    id: str = Field(description="the value of `model` in requests")
    name: str
    source: str
    available: bool = Field(description="false when the weights package is not installed")
    install: str | None = Field(description="how to install it, when it is not available")
    layers: int
    d_model: int
    d_ff: int
    activation: str


class TokenizeRequest(BaseModel):
    """Body of POST /api/tokenize."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"model": "minilm-l6", "text": "Unbelievable!"}]},
    )

    model: Literal["minilm-l6"] = Field(description="the pretrained model")
    text: str = Field(min_length=1, description="text; at most max_text_chars characters")


class TokenizeResponse(BaseModel):
    """WordPiece tokens of a text, with [CLS] and [SEP]."""

    tokens: list[str]
    token_ids: list[int]
    special: list[bool] = Field(description="true for [CLS]/[SEP]")


class NeuronRequest(BaseModel):
    """Body of POST /api/neuron: one hidden unit of one layer's FFN."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"model": "minilm-l6", "layer": 2, "unit": 7, "text": "The cat sat on the mat."}
            ]
        },
    )

    model: Literal["minilm-l6"] = Field(description="the pretrained model")
    layer: int = Field(ge=0, le=5, description="encoder layer (0-based)")
    unit: int = Field(ge=0, le=1535, description="hidden unit, 0 <= unit < d_ff = 1536")
    text: str | None = Field(None, description="also return the unit's activation on this text")
    top_k: int = Field(10, ge=1, le=20, description="how many tokens in each list")


class TopTokenOut(BaseModel):
    """A strong activation of the unit in the bundled corpus."""

    token: str
    activation: float = Field(description="GELU(x W1 + b1) of this unit on this token")
    sentence: str = Field(description="the corpus sentence it occurs in")
    position: int = Field(description="its token position in that sentence")


class NearTokenOut(BaseModel):
    """A vocabulary token near the unit's value vector."""

    token: str
    cosine: float = Field(description="cosine of its input embedding with the row of W2")


class NeuronResponse(BaseModel):
    """What one hidden unit responds to (its key) and what it writes (its value)."""

    model: str
    layer: int
    unit: int
    tokens: list[str] | None = Field(description="[T] tokens of `text`, when given")
    activations: Vector | None = Field(description="[T] the unit's activation on each token")
    top_tokens: list[TopTokenOut] = Field(
        description="strongest activations over the bundled corpus, one per distinct token; "
        "[CLS]/[SEP] are not counted"
    )
    corpus_sentences: int
    corpus_tokens: int
    corpus_index: Literal["memory", "disk", "computed"] = Field(
        description="where the corpus index came from (computed once, then cached)"
    )
    value_norm: float = Field(description="L2 norm of the unit's value vector (row of W2)")
    nearest_tokens: list[NearTokenOut] = Field(
        description="APPROXIMATION (Geva et al. 2021): vocabulary tokens whose input "
        "embeddings have the highest cosine with the value vector"
    )
    approximation: str = Field(description="what nearest_tokens means and does not mean")
