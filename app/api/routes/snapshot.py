"""POST /api/snapshot: a standalone HTML file of the current views (Plotly inlined)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from app.api.deps import CacheDep, SettingsDep
from app.api.schemas.ffn import SnapshotRequest
from app.lab import ffn as runner
from app.lab import pretrained as runner_pretrained
from app.lab.snapshot import render_snapshot

router = APIRouter(prefix="/api", tags=["export"])


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
def post_snapshot(req: SnapshotRequest, cache: CacheDep, settings: SettingsDep) -> HTMLResponse:
    """Render the flow, sparsity and perturbation views into one offline HTML file."""
    if req.model is not None:
        forward = runner_pretrained.forward(req, settings)
        perturb = runner_pretrained.perturb(req, settings)
    else:
        forward = runner.forward(req, cache, settings)
        perturb = runner.perturb(req, cache, settings)
    html = render_snapshot(forward, perturb, req.lang)
    name = f"{run_name(forward['config'])}_snapshot.html"
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="{name}"'})
