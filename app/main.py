"""create_app(): wires settings, middleware, static files and routers. Nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

import app as app_package
from app.api.assets import IMMUTABLE, REVALIDATE, CachedStaticFiles, static_version
from app.api.middleware import errors
from app.api.middleware.answer_cache import AnswerCacheMiddleware
from app.api.middleware.body_limit import BodySizeLimitMiddleware
from app.api.middleware.compression import PageCompressionMiddleware
from app.api.middleware.security_headers import SecurityHeadersMiddleware
from app.api.routes import cheaper as routes_cheaper
from app.api.routes import forward as routes_forward
from app.api.routes import handout as routes_handout
from app.api.routes import meta as routes_meta
from app.api.routes import neuron as routes_neuron
from app.api.routes import pages
from app.api.routes import pretrained as routes_pretrained
from app.api.routes import sessions as routes_sessions
from app.api.routes import snapshot as routes_snapshot
from app.api.routes import stack as routes_stack
from app.api.routes import teaching as routes_teaching
from app.api.routes import train as routes_train
from app.api.routes import weights as routes_weights
from app.config import Settings, get_settings
from app.model import fast_ffn
from app.paths import STATIC_DIR
from app.services import allocator, shutdown
from app.services.compute import ComputePools, apply_torch_threads
from app.services.sessions import make_service
from app.services.uploads import upload_store
from app.services.weight_cache import WeightCache


def create_app(settings: Settings | None = None) -> FastAPI:
    """The FFN Lab ASGI app. `settings` defaults to `get_settings()` (the environment)."""
    settings = settings or get_settings()
    allocator.tune(settings.malloc_arena_max, settings.malloc_mmap_threshold_bytes)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.weight_cache = WeightCache(settings.weight_cache_bytes)
        app.state.compute_pools = ComputePools(settings)
        apply_torch_threads(settings.torch_threads)  # the event loop runs small FFNs inline
        upload_store().resize(settings.upload_cache_bytes)
        fast_ffn.install(settings.matmul_workers)  # the FFN's executor: oneDNN, split maps
        restore = shutdown.install()  # training streams end at once on SIGTERM
        app.state.sessions = make_service(settings)
        await app.state.sessions.start()
        yield
        await app.state.sessions.close()
        restore()

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
    app.add_middleware(AnswerCacheMiddleware, max_bytes=settings.answer_cache_bytes)
    app.add_middleware(errors.InternalErrorMiddleware)
    app.add_middleware(
        BodySizeLimitMiddleware,
        max_body_bytes=settings.max_body_bytes,
        path_limits={"/api/weights/upload": settings.upload_max_bytes},
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"]
        )
    app.add_middleware(SecurityHeadersMiddleware, frame_ancestors=settings.frame_ancestors)
    app.add_middleware(PageCompressionMiddleware)  # outside the answer cache: plain bodies kept
    errors.install(app)
    # The page's bundled script lies under the versioned prefix: its route goes before it.
    app.include_router(pages.page_script_router)
    # Versioned (immutable) copies first: templates link them through url_for('static').
    app.mount(
        f"/static/{static_version()}",
        CachedStaticFiles(directory=STATIC_DIR, cache_control=IMMUTABLE),
        name="static",
    )
    app.mount(
        "/static",
        CachedStaticFiles(directory=STATIC_DIR, cache_control=REVALIDATE),
        name="static-latest",
    )
    app.include_router(routes_meta.router)
    app.include_router(routes_forward.router)
    app.include_router(routes_pretrained.router)
    app.include_router(routes_neuron.router)
    app.include_router(routes_teaching.router)
    app.include_router(routes_snapshot.router)
    app.include_router(routes_handout.router)
    app.include_router(routes_stack.router)
    app.include_router(routes_cheaper.router)
    app.include_router(routes_train.router)
    app.include_router(routes_weights.router)
    app.include_router(routes_sessions.router)
    app.include_router(routes_sessions.pages)
    app.include_router(pages.router)
    return app
