"""Request and response models of POST /api/stack (issue 13, part 1).

`StackRequest` extends the core's `ForwardRequest` (so every size, token and weight check
applies) with the stack's shape and an optional nudge named as /api/perturb names it.
Limits come from `app.config.Settings`; messages name the field, the value and what is
allowed, in a student's words.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from app.analysis import flop_count, param_counts
from app.analysis.budget import attention_flop_count
from app.api.schemas.ffn import ForwardRequest, Vector
from app.api.schemas.responses import ConfigOut, SparsityOut
from app.api.schemas.values import as_float_array
from app.config import get_settings
from app.lab.spec import PRETRAINED_D_MODEL, SEED_MAX
from app.lab.stack import attention_param_count
from app.model.ffn import FFNConfig


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

    n_layers: int = Field(4, ge=1, le=12, description="number of layers, 1 to 12")
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
        settings = get_settings()
        if self.model is not None:
            self._check_pretrained_stack()
            return self
        if self.n_layers > settings.max_layers:
            raise ValueError(
                f"n_layers = {self.n_layers} is too many: a stack has 1 to "
                f"{settings.max_layers} layers"
            )
        if self.mode != "eval":
            raise ValueError(
                "mode = 'train' is not available for the stack: it runs in eval mode (no "
                "dropout); leave mode out"
            )
        if self.weights is not None and not self.share_weights:
            raise ValueError(
                "weights are one FFN: with weights, set share_weights = true (every layer "
                "uses them), or leave weights out for each layer's own seeded FFN"
            )
        if self.attention and self.d_model % self.num_heads:
            raise ValueError(
                f"num_heads = {self.num_heads} does not divide d_model = {self.d_model}; each "
                "head needs d_k = d_model / num_heads (try 1)"
            )
        if self.attention and self.num_heads > settings.max_heads:
            raise ValueError(
                f"num_heads = {self.num_heads} is too many: at most {settings.max_heads} heads"
            )
        params = self.stack_params()
        if params > settings.max_params:
            raise ValueError(
                f"this stack (n_layers = {self.n_layers}, d_model = {self.d_model}, d_ff = "
                f"{self.d_ff}) has {params:,} parameters; this server runs at most "
                f"{settings.max_params:,}. Use fewer layers, share_weights, or a smaller d_ff"
            )
        self._check_nudge(settings.max_abs_value)
        return self

    def _check_pretrained_stack(self) -> None:
        """Model mode: the real encoder's shape; the position is checked at run time."""
        if self.n_layers > PRETRAINED_LAYERS:
            raise ValueError(
                f"n_layers = {self.n_layers} is too many: {self.model!r} has "
                f"{PRETRAINED_LAYERS} layers"
            )
        if self.share_weights:
            raise ValueError(
                f"share_weights is not available with model = {self.model!r}: its layers have "
                "their own trained weights"
            )
        if self.norm != "post":
            raise ValueError(f"model = {self.model!r} is post-norm (BERT); leave norm out")
        if self.layer != 0:
            raise ValueError("layer is not used by the stack: n_layers says how many layers run")
        self._check_nudge(get_settings().max_abs_value, pretrained=True)

    def _check_nudge(self, max_abs_value: float, pretrained: bool = False) -> None:
        if self.position is None:
            given = [n for n in ("delta", "scale") if getattr(self, n) is not None]
            if given:
                raise ValueError(f"{given[0]} needs a position: the token to nudge")
            return
        count = self.token_count
        width = PRETRAINED_D_MODEL if pretrained else self.d_model
        if not pretrained and self.position >= count:
            raise ValueError(
                f"position = {self.position} is out of range: there are {count} tokens, "
                f"so position must be in [0, {count - 1}]"
            )
        if self.delta is not None and self.scale is not None:
            raise ValueError("give either delta or scale, not both")
        if self.delta is not None:
            delta = as_float_array(self.delta, "delta", ndim=1)
            if delta.shape[0] != width:
                raise ValueError(
                    f"delta has {delta.shape[0]} numbers; it must have d_model = {width}"
                )
            self._delta = delta
        if self.scale is not None and self.scale > max_abs_value:
            raise ValueError(f"scale = {self.scale:g} is too large: at most {max_abs_value:g}")

    @property
    def distinct_layers(self) -> int:
        """How many different sets of weights the stack holds (1 when shared)."""
        return 1 if self.share_weights else self.n_layers

    def layer_config(self) -> FFNConfig:
        """Every layer's FFN shape (the pretrained model's: 384 -> 1536, GELU)."""
        if self.model is not None:
            return FFNConfig(PRETRAINED_D_MODEL, 4 * PRETRAINED_D_MODEL, "gelu")
        return self.ffn_config()

    def stack_params(self) -> int:
        """FFN (+ attention) parameters over the distinct layers."""
        config = self.layer_config()
        per_layer = param_counts(config)["total"]
        if self.attention:
            per_layer += attention_param_count(config.d_model, config.bias)
        return self.distinct_layers * per_layer

    def stack_flops(self) -> int:
        """FLOPs of the run: one pass (two with a nudge) through every layer (model: at the
        most tokens a text may give)."""
        config = self.layer_config()
        t = get_settings().max_tokens if self.model is not None else self.token_count
        per_layer = flop_count(config, t).total
        if self.attention:
            heads = 12 if self.model is not None else self.num_heads
            per_layer += attention_flop_count(config.d_model, t, heads, bias=config.bias).total
        passes = 1 if self.position is None else 2
        return passes * self.n_layers * per_layer

    @property
    def delta_array(self) -> npt.NDArray[np.float32] | None:
        """The validated `delta` [d_model], or None."""
        return self._delta


PRETRAINED_LAYERS = 6
"""Encoder layers of all-MiniLM-L6-v2."""


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
