"""POST endpoints that run the FFN: forward and perturb.

Small requests (at most `inline_max_flops`, seeded weights) are computed on the event
loop: for them the forward pass takes microseconds and a hop to a thread costs more than
the work. Bigger ones run in a bounded thread pool chosen by their estimated cost, within
a time budget (see `app.services.compute`); the response is encoded by orjson in the same
worker thread. Handlers read settings and state directly, without synchronous
dependencies (each would cost a thread hop per request).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response

from app.api.compute import run_request
from app.api.deps import lab_limits
from app.api.encoding import json_response, server_timing
from app.api.finite import finite_response
from app.api.json_body import FastJsonRoute
from app.api.schemas.forward import ForwardRequest, PerturbRequest
from app.api.schemas.responses import ErrorOut, ForwardResponse, PerturbResponse
from app.config import Settings, get_settings
from app.lab import pretrained as runner_pretrained
from app.lab.forward import forward_answer, perturb_answer
from app.lab.spec.specs import PRETRAINED_D_MODEL, ForwardSpec, PerturbSpec
from app.model.ffn import FFNConfig
from app.services.compute import Cost, checkpoint, estimate_cost
from app.services.weight_cache import WeightCache

router = APIRouter(prefix="/api", tags=["ffn"], route_class=FastJsonRoute)

ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "request body over max_body_bytes"},
    503: {"model": ErrorOut, "description": "busy: the request's time budget ran out"},
}


def _cost(req: ForwardRequest, settings: Settings, passes: int) -> Cost:
    """The request's cost class; the pretrained encoder (6 layers, first load) is heavy."""
    if req.model is not None:
        config = FFNConfig(PRETRAINED_D_MODEL, 4 * PRETRAINED_D_MODEL, "gelu")
        cost = estimate_cost(config, settings.max_tokens, settings, passes)
        return Cost(params=cost.params, flops=cost.flops, cost_class="heavy")
    return estimate_cost(req.ffn_config(), req.token_count, settings, passes)


def _forward(req: ForwardSpec, cache: WeightCache, settings: Settings) -> Response:
    if req.model is not None:
        return json_response(runner_pretrained.forward(req, lab_limits(settings)))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    content = forward_answer(req, cache, lab_limits(settings), timings)
    timings["analysis"] = time.perf_counter() - started - timings["model"] - timings["forward"]
    checkpoint()
    response = finite_response(
        content, req, lambda s: forward_answer(s, cache, lab_limits(settings), {})
    )
    timings["encode"] = time.perf_counter() - started - sum(timings.values())
    response.headers["server-timing"] = server_timing(timings)
    return response


def _perturb(req: PerturbSpec, cache: WeightCache, settings: Settings) -> Response:
    if req.model is not None:
        return json_response(runner_pretrained.perturb(req, lab_limits(settings)))
    content = perturb_answer(req, cache, lab_limits(settings))
    checkpoint()
    return finite_response(content, req, lambda s: perturb_answer(s, cache, lab_limits(settings)))


async def _run(request: Request, req: ForwardRequest, passes: int, work: Any) -> Response:
    """Inline when small, else in the cost class's pool within the time budget."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache
    cost = _cost(req, settings, passes)
    spec = req.spec()
    inline = req.model is None and cost.flops <= settings.inline_max_flops
    return await run_request(request, lambda: work(spec, cache, settings), cost, inline)


@router.post("/forward", response_model=ForwardResponse, responses=ERRORS)
async def post_forward(req: ForwardRequest, request: Request) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor.

    With `model` + `layer` + `text`, the FFN is a real pretrained layer's (503 when the
    weights package is not installed).
    """
    return await _run(request, req, 1, _forward)


@router.post("/perturb", response_model=PerturbResponse, responses=ERRORS)
async def post_perturb(req: PerturbRequest, request: Request) -> Response:
    """Nudge one token and return the output before and after, row by row.

    With `model`, also swap a word (`replace_word`) and compare the full layer.
    """
    return await _run(request, req, 2, _perturb)
