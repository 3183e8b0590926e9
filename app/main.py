"""create_app(): wires settings, middleware, static files and routers. Nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import torch
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

import app as app_package
from app.api import errors, pages, routes_ffn, routes_meta
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
        if settings.torch_threads:
            torch.set_num_threads(settings.torch_threads)
        yield

    app = FastAPI(
        title="FFN Lab",
        version=app_package.__version__,
        summary="A real PyTorch position-wise feed-forward network, step by step.",
        lifespan=lifespan,
    )
    app.add_middleware(SecurityHeadersMiddleware, frame_ancestors=settings.frame_ancestors)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"]
        )
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(routes_meta.router)
    app.include_router(routes_ffn.router)
    app.include_router(pages.router)
    return app
