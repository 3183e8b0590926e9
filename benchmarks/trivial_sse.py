"""The lecture benchmark's own trivial event-stream app: the client's ceiling.

`GET /events` streams every message posted to `POST /publish` (one asyncio.Queue per
listener, no validation, no store): what the benchmark's client and this uvicorn can do at
best, to put FFN Lab's change -> event latencies beside (benchmarks/lecture.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request, Response
from fastapi.responses import StreamingResponse

app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
listeners: set[asyncio.Queue[bytes]] = set()
counter = {"id": 0}


@app.get("/health")
async def health() -> Response:
    return Response(content=b'{"status":"ok"}', media_type="application/json")


@app.get("/events")
async def events() -> StreamingResponse:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    listeners.add(queue)

    async def body() -> AsyncIterator[bytes]:
        try:
            yield b'id: 0\nevent: state\ndata: {"version": 0}\n\n'
            while True:
                yield await queue.get()
        finally:
            listeners.discard(queue)

    return StreamingResponse(body(), media_type="text/event-stream")


@app.put("/publish")
async def publish(request: Request) -> Response:
    data = await request.body()
    counter["id"] += 1
    message = b"id: %d\nevent: state\ndata: %s\n\n" % (counter["id"], data)
    for queue in listeners:
        queue.put_nowait(message)
    return Response(content=b'{"ok":true}', media_type="application/json")
