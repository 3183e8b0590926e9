"""The benchmark's own trivial FastAPI app: one GET route, no middleware (issue 11, item 5).

Served by the same uvicorn as FFN Lab (`python -m uvicorn benchmarks.trivial_app:app`), it
is what "as fast as this stack can answer" means on this machine: FFN Lab's requests/s are
compared with it, and wrk's own ceiling with it.
"""

from __future__ import annotations

from fastapi import FastAPI, Response

app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)


@app.get("/")
async def root() -> Response:
    """A fixed 16-byte JSON answer."""
    return Response(content=b'{"status":"ok"}\n', media_type="application/json")
