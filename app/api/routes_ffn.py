"""POST endpoints that run the FFN: forward and perturb.

The work runs in a bounded thread pool chosen by its estimated cost, within a time budget
(see `app.api.compute`); the response is encoded by orjson in the same worker thread.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from app.api import runner, runner_pretrained
from app.api.compute import Cost, checkpoint, estimate_cost
from app.api.deps import CacheDep, PoolsDep, SettingsDep
from app.api.encoding import json_response
from app.api.schemas import (
    PRETRAINED_D_MODEL,
    ErrorOut,
    ForwardRequest,
    ForwardResponse,
    PerturbRequest,
    PerturbResponse,
)
from app.model.ffn import FFNConfig

router = APIRouter(prefix="/api", tags=["ffn"])

ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "request body over max_body_bytes"},
    503: {"model": ErrorOut, "description": "busy: the request's time budget ran out"},
}


@router.post("/forward", response_model=ForwardResponse, responses=ERRORS)
async def post_forward(
    req: ForwardRequest, cache: CacheDep, settings: SettingsDep, pools: PoolsDep
) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor.

    With `model` + `layer` + `text`, the FFN is a real pretrained layer's (503 when the
    weights package is not installed).
    """

    def work() -> Response:
        if req.model is not None:
            data = runner_pretrained.forward(req, settings)
        else:
            data = runner.forward(req, cache, settings)
        checkpoint()
        return json_response(data)

    return await pools.run(work, _cost(req, settings, passes=1))


@router.post("/perturb", response_model=PerturbResponse, responses=ERRORS)
async def post_perturb(
    req: PerturbRequest, cache: CacheDep, settings: SettingsDep, pools: PoolsDep
) -> Response:
    """Nudge one token and return the output before and after, row by row.

    With `model`, also swap a word (`replace_word`) and compare the full layer.
    """

    def work() -> Response:
        if req.model is not None:
            data = runner_pretrained.perturb(req, settings)
        else:
            data = runner.perturb(req, cache)
        checkpoint()
        return json_response(data)

    return await pools.run(work, _cost(req, settings, passes=2))


def _cost(req: ForwardRequest, settings: SettingsDep, passes: int) -> Cost:
    """The request's cost class; the pretrained encoder (6 layers, first load) is heavy."""
    if req.model is not None:
        config = FFNConfig(PRETRAINED_D_MODEL, 4 * PRETRAINED_D_MODEL, "gelu")
        cost = estimate_cost(config, settings.max_tokens, settings, passes)
        return Cost(params=cost.params, flops=cost.flops, cost_class="heavy")
    return estimate_cost(req.ffn_config(), req.token_count, settings, passes)
