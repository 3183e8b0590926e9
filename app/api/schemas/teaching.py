"""Request and response models of the teaching endpoints (attention vs FFN, the block,
variants, budget, Conv1d check, dropout, misconceptions).

They extend the core's `ForwardRequest`/`PerturbRequest`, so every core limit and
validator (sizes, parameters, tokens, submitted weights) applies unchanged; the new
limits come from `app.config.Settings` (max_heads).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.schemas.forward import ForwardRequest, Matrix, PerturbRequest, Vector, _check_max
from app.api.schemas.responses import ConfigOut, FlopsOut, ReductionOut, SparsityOut
from app.config import get_settings
from app.lab.spec.specs import (
    SEED_MAX,
    AttentionVsFFNSpec,
    BlockSpec,
    BudgetSpec,
    DropoutSpec,
    ForwardSpec,
    PerturbSpec,
    VariantsSpec,
    seeded_only_message,
    to_spec,
)
from app.model.activations import get_activation
from app.model.ffn import FFNConfig, expected_shapes


def check_heads(d_model: int, num_heads: int) -> None:
    """Raise ValueError unless 1 <= num_heads <= max_heads and num_heads divides d_model."""
    _check_max("num_heads", num_heads, get_settings().max_heads)
    if d_model % num_heads:
        raise ValueError(
            f"num_heads = {num_heads} does not divide d_model = {d_model}; each head needs "
            f"d_k = d_model / num_heads (try 1 or a divisor of {d_model})"
        )


class SeededOnly(BaseModel):
    """Mixin: the teaching views run on seeded or submitted weights, not the pretrained model."""

    @model_validator(mode="after")
    def _reject_pretrained(self) -> SeededOnly:
        model = getattr(self, "model", None)
        if model is not None:
            raise ValueError(seeded_only_message(model))
        return self


class SeededForwardRequest(SeededOnly, ForwardRequest):
    """The forward body, without the pretrained model."""

    def spec(self) -> ForwardSpec:
        """The validated body as the experiments layer's plain `ForwardSpec`."""
        return to_spec(self, ForwardSpec)


class SeededPerturbRequest(SeededOnly, PerturbRequest):
    """The perturb body, without the pretrained model."""

    def spec(self) -> PerturbSpec:
        """The validated body as the experiments layer's plain `PerturbSpec`."""
        return to_spec(self, PerturbSpec)


class AttentionVsFFNRequest(SeededOnly, PerturbRequest):
    """Body of POST /api/attention-vs-ffn: the perturb body plus the attention's shape."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "d_model": 16,
                    "d_ff": 64,
                    "num_tokens": 6,
                    "position": 2,
                    "scale": 1.0,
                    "num_heads": 2,
                }
            ]
        }
    )

    num_heads: int = Field(1, ge=1, description="attention heads h (must divide d_model)")
    attention_seed: int = Field(0, ge=0, le=SEED_MAX, description="seeds W_Q, W_K, W_V, W_O")
    influence: bool = Field(True, description="also perturb every token in turn: [T, T] maps")

    @model_validator(mode="after")
    def _check_heads(self) -> AttentionVsFFNRequest:
        check_heads(self.d_model, self.num_heads)
        return self

    def spec(self) -> AttentionVsFFNSpec:
        """The validated body as the experiments layer's plain `AttentionVsFFNSpec`."""
        return to_spec(self, AttentionVsFFNSpec)


class BlockRequest(SeededOnly, ForwardRequest):
    """Body of POST /api/block: the forward body plus where the LayerNorm goes."""

    norm: Literal["post", "pre"] = Field(
        "post", description="post: LayerNorm(x + FFN(x)); pre: x + FFN(LayerNorm(x))"
    )

    def spec(self) -> BlockSpec:
        """The validated body as the experiments layer's plain `BlockSpec`."""
        return to_spec(self, BlockSpec)


class VariantsRequest(SeededOnly, ForwardRequest):
    """Body of POST /api/variants: one input through ReLU, GELU, SiLU, SwiGLU, GeGLU (erf)
    and GeGLU (tanh).

    `activation` is ignored (every variant runs). With `match_params`, the gated variants
    use the d_ff' that gives them the plain FFN's parameter count (about 2/3 d_ff).
    Submitted `weights` must be a plain (non-gated) set; the gated variants add a seeded
    W_gate to them.
    """

    match_params: bool = Field(False, description="shrink the gated variants' d_ff to match")

    @model_validator(mode="after")
    def _check_gated_fits(self) -> VariantsRequest:
        settings = get_settings()
        gated = FFNConfig(self.d_model, self.d_ff, "swiglu", self.bias)
        params = sum(int(np.prod(s)) for s in expected_shapes(gated).values())
        if params > settings.max_params:
            raise ValueError(
                f"d_model={self.d_model}, d_ff={self.d_ff} needs {params:,} parameters for "
                f"the gated variants; the limit is {settings.max_params:,}"
            )
        submitted = self.weights is not None or self.weights_id is not None
        if submitted and get_activation(self.activation).gated:
            raise ValueError(
                "weights for the variants must be a plain set (w1, b1, w2, b2): give a "
                "non-gated activation with them"
            )
        return self

    def spec(self) -> VariantsSpec:
        """The validated body as the experiments layer's plain `VariantsSpec`."""
        return to_spec(self, VariantsSpec)


class BudgetRequest(SeededOnly, ForwardRequest):
    """Body of POST /api/budget: shapes only (tokens and weights are not needed)."""

    num_heads: int = Field(1, ge=1, description="attention heads h (must divide d_model)")

    @model_validator(mode="after")
    def _check_heads(self) -> BudgetRequest:
        check_heads(self.d_model, self.num_heads)
        return self

    def spec(self) -> BudgetSpec:
        """The validated body as the experiments layer's plain `BudgetSpec`."""
        return to_spec(self, BudgetSpec)


class DropoutRequest(SeededOnly, ForwardRequest):
    """Body of POST /api/dropout: the forward body; `dropout` is p, `dropout_seed` the mask.

    Both modes are always computed; `mode` picks which one the page shows first.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"d_model": 16, "d_ff": 64, "num_tokens": 6, "dropout": 0.5, "dropout_seed": 1}
            ]
        }
    )

    def spec(self) -> DropoutSpec:
        """The validated body as the experiments layer's plain `DropoutSpec`."""
        return to_spec(self, DropoutSpec)


# ---- responses ----


class DeltaOut(BaseModel):
    """How one sub-layer's output moved when token `position` was nudged."""

    delta_norm_per_position: Vector = Field(description="[T], ‖Δ output row‖₂")
    changed_positions: list[int] = Field(description="rows not bit-identical")
    moved_count: int = Field(description="number of rows with a nonzero change")
    max_abs_change_other_positions: float
    influence: Matrix | None = Field(
        description="[T, T]: row i holds ‖Δ output_j‖ when token i is nudged; null if too costly"
    )


class AttentionSideOut(DeltaOut):
    """The attention side: the same numbers plus its weights."""

    weights: list[Matrix] = Field(
        description="[h', T, T] attention weights of heads `heads_shown` (all h unless "
        "h T^2 is over the display budget), rows sum to 1"
    )
    weights_perturbed: list[Matrix] = Field(description="[h', T, T] after the nudge")
    heads_shown: list[int] | None = Field(
        None, description="the heads whose weights are sent (consecutive from 0)"
    )
    row_sums_max_error: float = Field(description="max |Σ_k a_jk − 1|")


class AttentionVsFFNResponse(BaseModel):
    """Attention mixes positions, the FFN does not: same tokens, same nudge."""

    config: ConfigOut
    position: int
    num_heads: int
    attention: AttentionSideOut
    ffn: DeltaOut
    influence_skipped_reason: str | None
    influence_flops: int = Field(
        description="FLOPs the two [T, T] influence maps cost (2T passes of both sub-layers)"
    )
    influence_max_flops: int = Field(
        description="the most this server spends on them; above it they are skipped"
    )


class BlockResponse(BaseModel):
    """Each step of the residual FFN sub-layer, with shapes."""

    config: ConfigOut
    norm: Literal["post", "pre"]
    steps: list[str]
    tensors: dict[str, Matrix] = Field(
        description="step -> [T, d_model] (columns as in `reduction` when summarised)"
    )
    reduction: ReductionOut | None = Field(
        None, description="what was summarised for display; null when sent whole"
    )
    shapes: dict[str, list[int]]
    row_mean: dict[str, Vector] = Field(description="step -> [T] mean of each row")
    row_std: dict[str, Vector] = Field(description="step -> [T] std of each row")
    row_norm: dict[str, Vector] = Field(description="step -> [T] L2 norm of each row")


class VariantOut(BaseModel):
    """One activation run on the shared input."""

    name: str
    label: str
    gated: bool
    d_ff: int
    params: dict[str, int]
    sparsity: SparsityOut
    fractions: dict[str, float] = Field(description="exact_zero, near_zero, negative")
    scatter: dict[str, Vector] = Field(description="z (pre-activation) and act(z), sampled")
    output_norm_mean: float


class VariantsResponse(BaseModel):
    """ReLU, GELU, SiLU, SwiGLU, GeGLU on the same input and W1."""

    config: ConfigOut
    match_params: bool
    variants: list[VariantOut]
    curves: dict[str, Any] = Field(description="z grid and act(z) per activation")
    shared_w1_max_abs_diff: float | None
    llama: dict[str, Any]


class BudgetResponse(BaseModel):
    """FFN vs attention parameters and FLOPs."""

    config: dict[str, Any]
    ffn: dict[str, Any]
    attention: dict[str, Any]
    ffn_share_of_params: float
    params_ratio: float
    series: dict[str, list[int]]


class Conv1dResponse(BaseModel):
    """The FFN and two kernel-size-1 convolutions on the same tokens."""

    config: ConfigOut
    max_abs_diff: float
    conv_shapes: dict[str, list[int]]
    linear_shapes: dict[str, list[int]]


class DropoutResponse(BaseModel):
    """Train vs eval dropout on the same FFN and tokens."""

    config: ConfigOut
    p: float
    scale: float
    hidden: Matrix = Field(description="[T, d_ff] (columns as in `reduction` when summarised)")
    dropped: list[list[bool]]
    kept: Matrix = Field(description="[T, d_ff], what W2 receives in train mode")
    reduction: ReductionOut | None = Field(
        None, description="what was summarised for display; null when sent whole"
    )
    dropped_fraction: float
    scaling_max_abs_error: float
    train_vs_eval_max_abs_diff: float
    other_seed_max_abs_diff: float
    eval_identity_max_abs_diff: float
    flops: FlopsOut


class MisconceptionsResponse(BaseModel):
    """Three checks against common misreadings of the FFN."""

    config: ConfigOut
    layers: list[dict[str, Any]]
    additivity_gap: float
    no_activation_gap: float
    no_activation_features_checked: int = Field(
        description="output features the no-activation gap was checked on (d_model up to "
        "the paper's base size; the first k of them beyond, where W1 W2 would cost minutes)"
    )
    no_activation_bilinear_gap: float | None = Field(
        None,
        description="gated only: max |g(a+b) - g(a) - g(b) + g(0)| of the gated FFN without "
        "its activation, g(x) = ((x W_gate + b_gate) * (x W1 + b1)) W2 + b2 (bilinear, not 0)",
    )
    mixing: dict[str, Any]
    shared_weights: dict[str, Any]
