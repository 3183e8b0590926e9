"""gzip for the page and its files, never for a stream (Starlette's GZipMiddleware, filtered).

A student's first load is mostly text (HTML, ES modules, catalogs, CSS: ~370 kB, ~100 kB
gzipped); plotly.js comes gzipped already (app.api.assets, `content-encoding` set: passed
through untouched). Not compressed:

- streams that must reach the page line by line: `text/event-stream` (Starlette's default
  exclusions) and the training curves' `application/x-ndjson` (`STREAM_TYPES`); gzip would
  hold their lines back until its buffer fills;
- paths under `skip_prefixes` (by default the API: `/api/`). The answers of one slider step
  are what the step waits for on the lecturer's machine; compressing them costs milliseconds
  per answer on every step, for bytes that a loopback or a wired projector does not miss.

Sits outside the answer cache (app.api.middleware.answer_cache), which keeps plain bodies.
"""

from __future__ import annotations

from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES, GZipMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

STREAM_TYPES = ("application/x-ndjson",)
"""Media types written as a stream, on top of Starlette's own exclusions (event streams)."""


class PageCompressionMiddleware:
    """GZipMiddleware (level 6, bodies from `minimum_size` bytes) for every HTTP path that
    does not start with one of `skip_prefixes`; streams are never compressed."""

    def __init__(
        self,
        app: ASGIApp,
        minimum_size: int = 1024,
        compresslevel: int = 6,
        skip_prefixes: tuple[str, ...] = ("/api/",),
    ) -> None:
        self.app = app
        self.skip_prefixes = skip_prefixes
        self.gzip = GZipMiddleware(
            app,
            minimum_size=minimum_size,
            compresslevel=compresslevel,
            exclude_content_types=DEFAULT_EXCLUDED_CONTENT_TYPES + STREAM_TYPES,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).startswith(self.skip_prefixes):
            await self.app(scope, receive, send)
            return
        await self.gzip(scope, receive, send)
