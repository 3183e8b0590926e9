"""POST /api/snapshot: a standalone HTML file of the current views (Plotly inlined)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from app.api.compute import run_request
from app.api.deps import lab_limits
from app.api.json_body import FastJsonRoute
from app.api.schemas.forward import SnapshotRequest
from app.config import get_settings
from app.lab import pretrained as runner_pretrained
from app.lab.forward import forward_answer, perturb_answer
from app.lab.snapshot import render_snapshot
from app.services.compute import Cost, estimate_cost
from app.services.weight_cache import WeightCache

router = APIRouter(prefix="/api", tags=["export"], route_class=FastJsonRoute)


def run_name(config: dict[str, Any]) -> str:
    """The configuration that ran, as the page names its exports: e.g.
    "ffn-lab_16x64_relu_T6", with "_minilm-l6-layer2" for the pretrained layer and "_train"
    in train mode."""
    model = f"_{config['model']}-layer{config['layer']}" if config.get("model") else ""
    mode = "_train" if config["mode"] == "train" else ""
    return (
        f"ffn-lab{model}_{config['d_model']}x{config['d_ff']}_{config['activation']}"
        f"_T{config['num_tokens']}{mode}"
    )


@router.post("/snapshot", response_class=HTMLResponse)
async def post_snapshot(req: SnapshotRequest, request: Request) -> Response:
    """Render the flow, sparsity and perturbation views into one offline HTML file.

    Runs in the compute pools like /api/forward (three passes: forward, perturb's two),
    so its numbers are computed with the same torch thread setting as the page's."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache

    spec = req.spec()

    def work() -> Response:
        if spec.model is not None:
            forward = runner_pretrained.forward(spec, lab_limits(settings))
            perturb = runner_pretrained.perturb(spec, lab_limits(settings))
        else:
            forward = forward_answer(spec, cache, lab_limits(settings))
            perturb = perturb_answer(spec, cache, lab_limits(settings))
        html = render_snapshot(forward, perturb, req.lang)
        name = f"{run_name(forward['config'])}_snapshot.html"
        disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
        return HTMLResponse(html, headers=disposition)

    cost = estimate_cost(req.ffn_config(), req.token_count, settings, passes=3)
    if req.model is not None:
        cost = Cost(cost.params, cost.flops, "heavy")
    return await run_request(request, work, cost)
