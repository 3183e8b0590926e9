"""The benchmark's own trivial FastAPI app: one GET route, no middleware.

Served by the same uvicorn as FFN Lab (`python -m uvicorn benchmarks.trivial_app:app`), it
is what "as fast as this stack can answer" means on this machine: FFN Lab's requests/s are
compared with it, and wrk's own ceiling with it.
"""

from __future__ import annotations

from fastapi import FastAPI, Query, Request, Response

app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)


@app.get("/")
async def root() -> Response:
    """A fixed 16-byte JSON answer."""
    return Response(content=b'{"status":"ok"}\n', media_type="application/json")


S_ANSWER_BYTES = 53_019
"""The size of FFN Lab's /api/forward answer at S (T 8, 64 -> 256 ReLU, seed 0)."""

_SIZED = b'"' + b"0" * (S_ANSWER_BYTES - 2) + b'"'


@app.post("/sized")
async def sized(request: Request) -> Response:
    """Reads the request body and answers a fixed JSON string of S's answer size: what
    this stack costs for a POST of that shape with no FFN, no validation, no encoding."""
    await request.body()
    return Response(content=_SIZED, media_type="application/json")


@app.post("/answer")
async def answer(request: Request, size: int = Query(ge=2, le=64 * 1024 * 1024)) -> Response:
    """Reads the request body and answers a JSON string of `size` bytes: the client's and
    uvicorn's own cost for a request of that shape (the L ratio's ceiling)."""
    await request.body()
    return Response(content=b'"' + b"0" * (size - 2) + b'"', media_type="application/json")
