"""create_app(): wires settings, middleware, static files and routers. Nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

import app as app_package
from app.api import (
    errors,
    pages,
    routes_cheaper,
    routes_ffn,
    routes_meta,
    routes_neuron,
    routes_pretrained,
    routes_snapshot,
    routes_stack,
    routes_teaching,
    routes_train,
)
from app.api.compute import ComputePools, apply_torch_threads
from app.api.limits import BodySizeLimitMiddleware
from app.api.security import SecurityHeadersMiddleware
from app.config import Settings, get_settings
from app.model.cache import WeightCache
from app.paths import STATIC_DIR


def create_app(settings: Settings | None = None) -> FastAPI:
    """The FFN Lab ASGI app. `settings` defaults to `get_settings()` (the environment)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.weight_cache = WeightCache(settings.weight_cache_bytes)
        app.state.compute_pools = ComputePools(settings)
        apply_torch_threads(settings.torch_threads)  # the event loop runs small FFNs inline
        yield

    app = FastAPI(
        title="FFN Lab",
        version=app_package.__version__,
        summary="A real PyTorch position-wise feed-forward network, step by step.",
        lifespan=lifespan,
        # Swagger UI and ReDoc load their scripts from a CDN: no external hosts (the CSP
        # would block them anyway). The schema itself stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
    )
    # Innermost first: the last one added sees every response, 413 and 500 included.
    app.add_middleware(errors.InternalErrorMiddleware)
    app.add_middleware(BodySizeLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"]
        )
    app.add_middleware(SecurityHeadersMiddleware, frame_ancestors=settings.frame_ancestors)
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(routes_meta.router)
    app.include_router(routes_ffn.router)
    app.include_router(routes_pretrained.router)
    app.include_router(routes_neuron.router)
    app.include_router(routes_teaching.router)
    app.include_router(routes_snapshot.router)
    app.include_router(routes_stack.router)
    app.include_router(routes_cheaper.router)
    app.include_router(routes_train.router)
    app.include_router(pages.router)
    return app
