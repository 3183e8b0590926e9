"""Request and response models of POST /api/stack: a stack of Transformer layers.

`StackRequest` extends the core's `ForwardRequest` (so every size, token and weight check
applies) with the stack's shape and an optional nudge named as /api/perturb names it.
Limits come from `app.config.Settings`; the body's checks are `app.lab.stack.answer.check_stack`
(the ones `lab.stack(...)` runs), messages naming the field, the value and what is allowed.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from app.api.deps import lab_limits
from app.api.schemas.forward import ForwardRequest, Vector
from app.api.schemas.responses import ConfigOut, SparsityOut
from app.config import get_settings
from app.lab.spec.specs import SEED_MAX, to_spec
from app.lab.stack.answer import MAX_LAYERS, StackSpec, check_stack


class StackRequest(ForwardRequest):
    """Body of POST /api/stack: the forward body plus the stack's shape.

    With `position` (and `scale` or `delta`), token `position` is nudged and both inputs run
    through the whole stack in two separate calls (as /api/perturb does for one FFN).

    With `model` = "minilm-l6" and `text`, the stack is the real encoder's first `n_layers`
    (1 to 6) layers on the text's embeddings: attention true runs the encoder itself,
    false each layer's FFN and output LayerNorm alone. Post-norm, no sharing, no weights.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "d_model": 16,
                    "d_ff": 64,
                    "num_tokens": 6,
                    "n_layers": 4,
                    "attention": True,
                    "position": 2,
                    "scale": 1.0,
                },
                {"d_model": 16, "d_ff": 64, "n_layers": 12, "share_weights": True},
                {
                    "model": "minilm-l6",
                    "text": "The cat sat on the mat.",
                    "n_layers": 6,
                    "attention": True,
                    "position": 2,
                    "scale": 1.0,
                },
            ]
        }
    )

    n_layers: int = Field(
        4, ge=1, le=MAX_LAYERS, description=f"number of layers, 1 to {MAX_LAYERS}"
    )
    share_weights: bool = Field(
        False,
        description="ALBERT-style: one FFN (and one attention) for every layer; its weights "
        "are layer 0's",
    )
    attention: bool = Field(
        False,
        description="true: full blocks (self-attention + FFN, each with residual and "
        "LayerNorm); false: FFN sub-layers only",
    )
    norm: Literal["post", "pre"] = Field(
        "post", description="post: LayerNorm(x + f(x)); pre: x + f(LayerNorm(x))"
    )
    num_heads: int = Field(1, ge=1, description="attention heads h (must divide d_model)")
    position: int | None = Field(
        None, ge=0, description="0-based token to nudge; none: no perturbation"
    )
    delta: Vector | None = Field(None, description="[d_model] added to tokens[position]")
    scale: float | None = Field(
        None, ge=0.0, description="L2 norm of a random nudge (1 when position alone is given)"
    )
    direction_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds the random direction")

    _delta: npt.NDArray[np.float32] | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _check_stack(self) -> StackRequest:
        self._delta = check_stack(
            self.spec(), self.delta, self.weights is not None, lab_limits(get_settings())
        )
        return self

    def spec(self) -> StackSpec:
        """The validated body as the experiments layer's plain `StackSpec`."""
        return to_spec(self, StackSpec)

    @property
    def delta_array(self) -> npt.NDArray[np.float32] | None:
        """The validated `delta` [d_model], or None."""
        return self._delta


class StackChangeOut(BaseModel):
    """How a layer's output moved when token `position` of the stack's input was nudged."""

    delta_norm_per_position: Vector = Field(description="[T], ‖Δ output row‖₂")
    changed_positions: list[int] = Field(description="rows not bit-identical")
    max_abs_change_other_positions: float = Field(
        description="max |Δ| over rows other than `position`; exactly 0.0 without attention"
    )


class StackLayerOut(BaseModel):
    """One layer of the stack."""

    index: int = Field(description="0-based layer index")
    params: dict[str, int] = Field(description="its FFN's parameters per tensor and total")
    weights_stream: str = Field(
        description="seeding stream of its FFN weights, e.g. 'layer3.weights'; 'layer0.weights' "
        "for every layer when shared; 'submitted' for user weights"
    )
    update_ratio: list[float | None] = Field(
        description="[T], ‖FFN(x)‖ / ‖x‖ per position, x = the residual stream entering the "
        "FFN sub-layer (null where ‖x‖ = 0)"
    )
    attention_update_ratio: list[float | None] | None = Field(
        description="[T], ‖Attn‖ / ‖x‖, x = the layer's input; null without attention"
    )
    sparsity: SparsityOut = Field(description="of this FFN's hidden [T, d_ff]")
    output_row_norms: Vector = Field(description="[T], ‖layer output row‖₂")
    changed_positions: list[int] | None = Field(
        description="rows of this layer's output that changed (null without a nudge)"
    )
    delta_norm_per_position: Vector | None = Field(description="[T] ‖Δ‖ after this layer")
    max_abs_change_other_positions: float | None


class StackResponse(BaseModel):
    """A stack of layers, each with its own (or one shared) FFN."""

    config: ConfigOut
    n_layers: int
    share_weights: bool
    attention: bool
    norm: Literal["post", "pre"]
    num_heads: int
    layers: list[StackLayerOut]
    params_total: int = Field(description="FFN parameters: one FFN's when shared, else n_layers x")
    attention_params_total: int = Field(description="attention parameters (0 without attention)")
    output: list[list[float]] = Field(description="[T, d_model], the last layer's output")
    position: int | None
    changed_positions: list[int] | None = Field(
        description="rows of the last layer's output that changed (null without a nudge)"
    )
    delta_norm_per_position: Vector | None
    max_abs_change_other_positions: float | None
    tokens: list[str] | None = Field(None, description="[T] tokens of `text`; model only")
    special: list[bool] | None = Field(None, description="[T] true for [CLS]/[SEP]; model only")
