"""POST /api/snapshot: a standalone HTML file of the current views (Plotly inlined)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from app.api import runner, runner_pretrained
from app.api.compute import Cost, estimate_cost, run_request
from app.api.schemas import SnapshotRequest
from app.api.snapshot import render_snapshot
from app.config import get_settings
from app.model.cache import WeightCache

router = APIRouter(prefix="/api", tags=["export"])


@router.post("/snapshot", response_class=HTMLResponse)
async def post_snapshot(req: SnapshotRequest, request: Request) -> Response:
    """Render the flow, sparsity and perturbation views into one offline HTML file.

    Runs in the compute pools like /api/forward (three passes: forward, perturb's two),
    so its numbers are computed with the same torch thread setting as the page's."""
    settings = get_settings()
    cache: WeightCache = request.app.state.weight_cache

    def work() -> Response:
        if req.model is not None:
            forward = runner_pretrained.forward(req, settings)
            perturb = runner_pretrained.perturb(req, settings)
        else:
            forward = runner.forward(req, cache, settings)
            perturb = runner.perturb(req, cache, settings)
        html = render_snapshot(forward, perturb, req.lang)
        name = f"ffn-lab_{req.d_model}x{req.d_ff}_{req.activation}_snapshot.html"
        disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
        return HTMLResponse(html, headers=disposition)

    cost = estimate_cost(req.ffn_config(), req.token_count, settings, passes=3)
    if req.model is not None:
        cost = Cost(cost.params, cost.flops, "heavy")
    return await run_request(request, work, cost)
