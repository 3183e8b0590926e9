"""Request and response models of POST /api/cheaper (issue 13, part 3)."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from app.api.schemas.ffn import Matrix, Vector
from app.api.schemas.responses import ConfigOut
from app.api.schemas.teaching import SeededForwardRequest
from app.config import get_settings


class CheaperRequest(SeededForwardRequest):
    """Body of POST /api/cheaper: the forward body plus the cheaper FFNs' shapes.

    `rank` defaults to d_model // 4 (at least 1); `d_inner` (MobileBERT's bottleneck) to
    d_model // 4 (at least 1); `num_ffns` to 4 (MobileBERT's stacked FFNs).
    """

    rank: int | None = Field(None, ge=1, description="r: W1 ~ U V, U [d_model, r], V [r, d_ff]")
    d_inner: int | None = Field(None, ge=1, description="bottleneck width of the stacked FFN")
    num_ffns: int = Field(4, ge=1, le=12, description="F, the stacked small FFNs")

    @model_validator(mode="after")
    def _check_shapes(self) -> CheaperRequest:
        entries, most = self.d_model * self.d_ff, get_settings().max_svd_values
        if entries > most:
            raise ValueError(
                f"d_model = {self.d_model}, d_ff = {self.d_ff}: W1 has {entries:,} entries; the "
                f"low-rank view factors W1 by SVD and takes at most {most:,} (e.g. 1024 x 4096)"
            )
        limit = min(self.d_model, self.d_ff)
        if self.rank is not None and self.rank > limit:
            raise ValueError(
                f"rank = {self.rank} is too large: a rank-r factorisation of W1 "
                f"[{self.d_model}, {self.d_ff}] needs r <= min(d_model, d_ff) = {limit}"
            )
        if self.d_inner is not None and self.d_inner > self.d_model:
            raise ValueError(
                f"d_inner = {self.d_inner} is too large: the bottleneck must be at most "
                f"d_model = {self.d_model}"
            )
        return self

    @property
    def rank_used(self) -> int:
        """r, the given one or d_model // 4 (within [1, min(d_model, d_ff)])."""
        default = min(max(1, self.d_model // 4), self.d_ff)
        return self.rank if self.rank is not None else default

    @property
    def d_inner_used(self) -> int:
        """The bottleneck width, the given one or max(1, d_model // 4)."""
        return self.d_inner if self.d_inner is not None else max(1, self.d_model // 4)


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
