"""POST endpoints of the teaching views: the FFN against attention, in its block, its
variants, its budget, the Conv1d identity, dropout and common misconceptions."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.api.deps import CacheDep, SettingsDep
from app.api.encoding import json_response
from app.api.schemas.teaching import (
    AttentionVsFFNRequest,
    AttentionVsFFNResponse,
    BlockRequest,
    BlockResponse,
    BudgetRequest,
    BudgetResponse,
    Conv1dResponse,
    DropoutRequest,
    DropoutResponse,
    MisconceptionsResponse,
    SeededForwardRequest,
    SeededPerturbRequest,
    VariantsRequest,
    VariantsResponse,
)
from app.lab import block as runner_block
from app.lab import contrast as runner_contrast

router = APIRouter(prefix="/api", tags=["teaching"])


@router.post("/attention-vs-ffn", response_model=AttentionVsFFNResponse)
def post_attention_vs_ffn(
    req: AttentionVsFFNRequest, cache: CacheDep, settings: SettingsDep
) -> Response:
    """Nudge one token; compare ‖Δ output‖ per position of self-attention and the FFN."""
    return json_response(runner_contrast.attention_vs_ffn(req, cache, settings))


@router.post("/block", response_model=BlockResponse)
def post_block(req: BlockRequest, cache: CacheDep) -> Response:
    """The FFN sub-layer with its residual add and LayerNorm (post- or pre-norm), step by step."""
    return json_response(runner_block.block(req, cache))


@router.post("/variants", response_model=VariantsResponse)
def post_variants(req: VariantsRequest, cache: CacheDep, settings: SettingsDep) -> Response:
    """The same input and W1 through ReLU, GELU, SiLU, SwiGLU, GeGLU and GeGLU (tanh)."""
    return json_response(runner_block.variants(req, cache, settings))


@router.post("/budget", response_model=BudgetResponse)
def post_budget(req: BudgetRequest, settings: SettingsDep) -> Response:
    """Parameters and FLOPs of the FFN against self-attention, for this T and over T."""
    return json_response(runner_block.budget(req, settings))


@router.post("/conv1d-check", response_model=Conv1dResponse)
def post_conv1d_check(req: SeededForwardRequest, cache: CacheDep) -> Response:
    """max |FFN(x) − Conv1d(Conv1d(x))| with kernel-size-1 convolutions of the same weights."""
    return json_response(runner_block.conv1d_check(req, cache))


@router.post("/dropout", response_model=DropoutResponse)
def post_dropout(req: DropoutRequest, cache: CacheDep) -> Response:
    """Dropout in train mode (mask, 1/(1-p) scaling) against eval mode (identity)."""
    return json_response(runner_block.dropout(req, cache))


@router.post("/misconceptions", response_model=MisconceptionsResponse)
def post_misconceptions(
    req: SeededPerturbRequest, cache: CacheDep, settings: SettingsDep
) -> Response:
    """Checks: two linear maps not one, no mixing of tokens, one W1 for every position."""
    return json_response(runner_contrast.misconceptions(req, cache, settings))
