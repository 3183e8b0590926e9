"""GET endpoints that describe the server: health, activations, presets."""

from __future__ import annotations

import platform

import fastapi
import numpy
import plotly
import torch
from fastapi import APIRouter, Query, Request

import app
from app.analysis import param_counts
from app.analysis.library_snippets import all_snippets
from app.api.schemas.responses import ActivationOut, ComputeStatsOut, HealthOut, PresetOut
from app.model.activations import ACTIVATIONS
from app.model.ffn import FFNConfig
from app.model.presets import PRESETS
from app.services.compute import ComputePools

router = APIRouter(prefix="/api", tags=["meta"])


@router.get("/health", response_model=HealthOut)
async def get_health(request: Request) -> HealthOut:
    """Liveness, with the versions of the libraries that compute the numbers and this
    process's compute counters."""
    pools: ComputePools | None = getattr(request.app.state, "compute_pools", None)
    return HealthOut(
        compute=None if pools is None else ComputeStatsOut(**pools.stats()),
        status="ok",
        version=app.__version__,
        torch=torch.__version__,
        numpy=numpy.__version__,
        fastapi=fastapi.__version__,
        plotly=plotly.__version__,
        python=platform.python_version(),
    )


@router.get("/activations", response_model=list[ActivationOut])
def list_activations() -> list[ActivationOut]:
    """Every supported activation with its LaTeX formula and whether it is gated."""
    return [
        ActivationOut(
            name=s.name,
            label=s.label,
            gated=s.gated,
            formula=s.formula,
            exact_zeros=s.exact_zeros,
            source=s.source,
        )
        for s in ACTIVATIONS.values()
    ]


@router.get("/presets", response_model=list[PresetOut])
def list_presets() -> list[PresetOut]:
    """Named configurations from the literature, with their source and parameter count."""
    return [
        PresetOut(
            id=p.id,
            name=p.name,
            d_model=p.d_model,
            d_ff=p.d_ff,
            activation=p.activation,
            bias=p.bias,
            source=p.source,
            num_tokens=p.num_tokens,
            params=param_counts(FFNConfig(p.d_model, p.d_ff, p.activation, p.bias))["total"],
            weights=p.weights,
            tokens=p.tokens,
        )
        for p in PRESETS
    ]


@router.get("/tensor-names")
def get_tensor_names(
    layer: int = Query(0, ge=0, le=127, description="the layer index the code reads"),
) -> dict[str, dict[str, object]]:
    """The FFN's tensors named in TransformerLens 4, transformers and nnsight, per model
    family (bert, gpt2, llama), with code that reads them at `layer` (the page's "Read this
    in your library" panel; `tensor_names` of a /api/forward answer says which family)."""
    return all_snippets(layer)
