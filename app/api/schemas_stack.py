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
from app.api.responses import ConfigOut, SparsityOut
from app.api.schemas import SEED_MAX, ForwardRequest, Vector
from app.api.schemas_teaching import SeededOnly
from app.api.values import as_float_array
from app.config import get_settings
from app.lab.stack import attention_param_count


class StackRequest(SeededOnly, ForwardRequest):
    """Body of POST /api/stack: the forward body plus the stack's shape.

    With `position` (and `scale` or `delta`), token `position` is nudged and both inputs run
    through the whole stack in two separate calls (as /api/perturb does for one FFN).
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
            ]
        }
    )

    n_layers: int = Field(4, ge=1, description="number of layers, 1 to 12")
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

    def _check_nudge(self, max_abs_value: float) -> None:
        if self.position is None:
            given = [n for n in ("delta", "scale") if getattr(self, n) is not None]
            if given:
                raise ValueError(f"{given[0]} needs a position: the token to nudge")
            return
        count = self.token_count
        if self.position >= count:
            raise ValueError(
                f"position = {self.position} is out of range: there are {count} tokens, "
                f"so position must be in [0, {count - 1}]"
            )
        if self.delta is not None and self.scale is not None:
            raise ValueError("give either delta or scale, not both")
        if self.delta is not None:
            delta = as_float_array(self.delta, "delta", ndim=1)
            if delta.shape[0] != self.d_model:
                raise ValueError(
                    f"delta has {delta.shape[0]} numbers; it must have d_model = {self.d_model}"
                )
            self._delta = delta
        if self.scale is not None and self.scale > max_abs_value:
            raise ValueError(f"scale = {self.scale:g} is too large: at most {max_abs_value:g}")

    @property
    def distinct_layers(self) -> int:
        """How many different sets of weights the stack holds (1 when shared)."""
        return 1 if self.share_weights else self.n_layers

    def stack_params(self) -> int:
        """FFN (+ attention) parameters over the distinct layers."""
        per_layer = param_counts(self.ffn_config())["total"]
        if self.attention:
            per_layer += attention_param_count(self.d_model, self.bias)
        return self.distinct_layers * per_layer

    def stack_flops(self) -> int:
        """FLOPs of the run: one pass (two with a nudge) through every layer."""
        t = self.token_count
        per_layer = flop_count(self.ffn_config(), t).total
        if self.attention:
            per_layer += attention_flop_count(self.d_model, t, self.num_heads, bias=self.bias).total
        passes = 1 if self.position is None else 2
        return passes * self.n_layers * per_layer

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
