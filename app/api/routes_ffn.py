"""POST endpoints that run the FFN: forward and perturb."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.api import runner, runner_pretrained
from app.api.deps import CacheDep, SettingsDep
from app.api.encoding import json_response
from app.api.schemas import ForwardRequest, ForwardResponse, PerturbRequest, PerturbResponse

router = APIRouter(prefix="/api", tags=["ffn"])


@router.post("/forward", response_model=ForwardResponse)
def post_forward(req: ForwardRequest, cache: CacheDep, settings: SettingsDep) -> Response:
    """Run FFN(x) = act(x W1 + b1) W2 + b2 and return every intermediate tensor.

    With `model` + `layer` + `text`, the FFN is a real pretrained layer's (503 when the
    weights package is not installed).
    """
    if req.model is not None:
        return json_response(runner_pretrained.forward(req, settings))
    return json_response(runner.forward(req, cache, settings))


@router.post("/perturb", response_model=PerturbResponse)
def post_perturb(req: PerturbRequest, cache: CacheDep, settings: SettingsDep) -> Response:
    """Nudge one token and return the output before and after, row by row.

    With `model`, also swap a word (`replace_word`) and compare the full layer.
    """
    if req.model is not None:
        return json_response(runner_pretrained.perturb(req, settings))
    return json_response(runner.perturb(req, cache))
