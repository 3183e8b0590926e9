"""POST /api/snapshot: a standalone HTML file of the current views (Plotly inlined)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from app.api.deps import CacheDep, SettingsDep
from app.api.schemas.ffn import SnapshotRequest
from app.lab import ffn as runner
from app.lab import pretrained as runner_pretrained
from app.lab.snapshot import render_snapshot

router = APIRouter(prefix="/api", tags=["export"])


@router.post("/snapshot", response_class=HTMLResponse)
def post_snapshot(req: SnapshotRequest, cache: CacheDep, settings: SettingsDep) -> HTMLResponse:
    """Render the flow, sparsity and perturbation views into one offline HTML file."""
    spec = req.spec()
    if spec.model is not None:
        forward = runner_pretrained.forward(spec, settings)
        perturb = runner_pretrained.perturb(spec, settings)
    else:
        forward = runner.forward(spec, cache, settings)
        perturb = runner.perturb(spec, cache, settings)
    html = render_snapshot(forward, perturb, req.lang)
    name = f"ffn-lab_{req.d_model}x{req.d_ff}_{req.activation}_snapshot.html"
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="{name}"'})
