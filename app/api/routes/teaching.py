"""POST endpoints of the teaching views: the FFN against attention, in its block, its
variants, its budget, the Conv1d identity, dropout and common misconceptions.

Like /api/forward, each runs in the compute pool of its estimated cost (the FFN passes
its runner makes), within the time budget, dropped before it starts when its client is
gone or a newer request with the same supersede key came (see `app.services.compute`); tiny
ones run inline on the event loop. The answer is encoded in the same worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response

from app.api.compute import run_request
from app.api.deps import lab_limits
from app.api.encoding import json_response
from app.api.finite import finite_response
from app.api.json_body import FastJsonRoute
from app.api.schemas.forward import ForwardRequest
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
from app.config import get_settings
from app.lab import block as runner_block
from app.lab import contrast as runner_contrast
from app.lab.limits import Limits
from app.services.compute import checkpoint, estimate_cost
from app.services.weight_cache import WeightCache

router = APIRouter(prefix="/api", tags=["teaching"], route_class=FastJsonRoute)

Work = Callable[[Any, WeightCache, Limits], dict[str, Any]]


async def _run(request: Request, req: ForwardRequest, passes: int, work: Work) -> Response:
    """`work(spec, cache, limits)` encoded as JSON (finite numbers only, else a 422 that
    names the input scale that fits: `app.api.finite`), inline or in a pool by its cost
    (`passes` forward passes of the request's FFN: the runner's own count)."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache
    cost = estimate_cost(req.ffn_config(), req.token_count, settings, passes)
    spec = req.spec()
    limits = lab_limits(settings)

    def compute() -> Response:
        content = work(spec, cache, limits)
        checkpoint()
        return finite_response(content, spec, lambda smaller: work(smaller, cache, limits))

    inline = cost.flops <= settings.inline_max_flops and cost.cost_class == "light"
    return await run_request(request, compute, cost, inline)


@router.post("/attention-vs-ffn", response_model=AttentionVsFFNResponse)
async def post_attention_vs_ffn(req: AttentionVsFFNRequest, request: Request) -> Response:
    """Nudge one token; compare ‖Δ output‖ per position of self-attention and the FFN."""
    passes = 2 + (2 * req.token_count if req.influence else 0)
    return await _run(
        request, req, passes, lambda p, c, s: runner_contrast.attention_vs_ffn(p, c, s)
    )


@router.post("/block", response_model=BlockResponse)
async def post_block(req: BlockRequest, request: Request) -> Response:
    """The FFN sub-layer with its residual add and LayerNorm (post- or pre-norm), step by step."""
    return await _run(request, req, 1, lambda p, c, s: runner_block.block(p, c, s))


@router.post("/variants", response_model=VariantsResponse)
async def post_variants(req: VariantsRequest, request: Request) -> Response:
    """The same input and W1 through ReLU, GELU, SiLU, SwiGLU, GeGLU and GeGLU (tanh)."""
    return await _run(request, req, 6, lambda p, c, s: runner_block.variants(p, c, s))


@router.post("/budget", response_model=BudgetResponse)
async def post_budget(req: BudgetRequest) -> Response:
    """Parameters and FLOPs of the FFN against self-attention, for this T and over T
    (formulas only: answered on the event loop)."""
    return json_response(runner_block.budget(req.spec(), lab_limits(get_settings())))


@router.post("/conv1d-check", response_model=Conv1dResponse)
async def post_conv1d_check(req: SeededForwardRequest, request: Request) -> Response:
    """max |FFN(x) − Conv1d(Conv1d(x))| with kernel-size-1 convolutions of the same weights."""
    return await _run(request, req, 2, lambda p, c, s: runner_block.conv1d_check(p, c))


@router.post("/dropout", response_model=DropoutResponse)
async def post_dropout(req: DropoutRequest, request: Request) -> Response:
    """Dropout in train mode (mask, 1/(1-p) scaling) against eval mode (identity)."""
    return await _run(request, req, 4, lambda p, c, s: runner_block.dropout(p, c, s))


@router.post("/misconceptions", response_model=MisconceptionsResponse)
async def post_misconceptions(req: SeededPerturbRequest, request: Request) -> Response:
    """Checks: two linear maps not one, no mixing of tokens, one W1 for every position."""
    passes = 6 + req.token_count
    return await _run(request, req, passes, lambda p, c, s: runner_contrast.misconceptions(p, c, s))
