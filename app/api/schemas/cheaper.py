"""Request and response models of POST /api/cheaper: cheaper FFNs, measured."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from app.api.schemas.forward import Matrix, Vector
from app.api.schemas.responses import ConfigOut
from app.api.schemas.teaching import SeededForwardRequest
from app.config import get_settings
from app.lab.cheaper.answer import MAX_NUM_FFNS, CheaperSpec, check_cheaper
from app.lab.spec.specs import to_spec


class CheaperRequest(SeededForwardRequest):
    """Body of POST /api/cheaper: the forward body plus the cheaper FFNs' shapes.

    `rank` defaults to d_model // 4 (at least 1); `d_inner` (MobileBERT's bottleneck) to
    d_model // 4 (at least 1); `num_ffns` to 4 (MobileBERT's stacked FFNs).
    """

    rank: int | None = Field(None, ge=1, description="r: W1 ~ U V, U [d_model, r], V [r, d_ff]")
    d_inner: int | None = Field(None, ge=1, description="bottleneck width of the stacked FFN")
    num_ffns: int = Field(4, ge=1, le=MAX_NUM_FFNS, description="F, the stacked small FFNs")

    @model_validator(mode="after")
    def _check_shapes(self) -> CheaperRequest:
        settings = get_settings()
        check_cheaper(self.d_model, self.d_ff, self.rank, self.d_inner, settings.max_svd_values)
        return self

    def spec(self) -> CheaperSpec:
        """The validated body as the experiments layer's plain `CheaperSpec`."""
        return to_spec(self, CheaperSpec)


class CheaperVariantOut(BaseModel):
    """One FFN on the shared input."""

    name: str = Field(description="plain, low_rank or stacked")
    params: dict[str, int] = Field(description="parameters per part and total")
    params_ratio: float = Field(description="total / the plain FFN's total")
    flops: int = Field(description="FLOPs of one pass over the T tokens")
    flops_ratio: float = Field(description="flops / the plain FFN's")
    output: Matrix = Field(description="[T, d_model]")
    output_row_norms: Vector = Field(description="[T]")
    approximates_plain: bool = Field(
        description="true when the weights come from the plain FFN's (low rank: the SVD of W1)"
    )
    max_abs_diff_from_plain: float
    relative_error: float = Field(description="‖output − plain output‖_F / ‖plain output‖_F")


class CheaperResponse(BaseModel):
    """The plain FFN, a low-rank one and MobileBERT's stacked FFNs on the same input."""

    config: ConfigOut
    rank: int
    d_inner: int
    num_ffns: int
    variants: list[CheaperVariantOut]
    singular_values: Vector = Field(description="of the plain W1, descending")
    energy_kept: float = Field(description="Σ_{i<r} σ_i² / Σ σ_i²: W1's energy the rank keeps")
