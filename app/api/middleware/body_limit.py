"""Request body size limit (pure ASGI middleware): 413 before a large body is read in full.

A declared `Content-Length` over the limit is refused before a single body byte is kept.
A body without one (chunked transfer encoding) is read chunk by chunk and refused as soon
as the running total passes the limit, so the server never holds more than
`max_body_bytes` of any request. The limit is `Settings.max_body_bytes`. The rest of a
refused body is read and discarded (up to 8x the limit, 10 s) before the 413 is sent, so that a
client that is still sending can read the answer instead of a reset connection.
"""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.encoding import json_response


def too_large_message(limit: int, size: int | None) -> str:
    """The 413 message: names the body, its size when known, and the limit."""
    what = f"is {size:,} bytes" if size is not None else "is over the limit"
    return (
        f"request body {what}; the limit is {limit:,} bytes (setting max_body_bytes). "
        "Send fewer tokens or smaller weights."
    )


class BodySizeLimitMiddleware:
    """Refuses HTTP request bodies over `max_body_bytes` with 413 JSON {"detail": message}."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._refuse(scope, receive, send, declared)
            return
        # Read the body here, chunk by chunk, stopping at the limit; then replay it.
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect: hand it on
                await self.app(scope, _replay(None, receive, first=message), send)
                return
            body = message.get("body", b"")
            total += len(body)
            if total > self.max_body_bytes:
                ended = not message.get("more_body", False)
                await self._refuse(scope, receive, send, None, ended=ended)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, size: int | None, ended: bool = False
    ) -> None:
        response = json_response(
            {"detail": too_large_message(self.max_body_bytes, size)}, status_code=413
        )
        # Read the rest of the body and throw it away (nothing is kept), so that the client,
        # which is still sending, can read the answer. A body over DRAIN_FACTOR x the limit,
        # or one that does not arrive within DRAIN_SECONDS, is not waited for: close.
        budget = DRAIN_FACTOR * self.max_body_bytes
        drained = ended
        if not ended and (size is None or size <= budget):
            with anyio.move_on_after(DRAIN_SECONDS):
                drained = await _drain(receive, budget)
        if not drained:
            response.headers["connection"] = "close"
        await response(scope, receive, send)


DRAIN_FACTOR = 8
"""A refused body is read and discarded up to this many times max_body_bytes."""
DRAIN_SECONDS = 10.0
"""... and for at most this long."""


async def _drain(receive: Receive, budget: int) -> bool:
    """Discard body chunks until the body ends (True) or `budget` bytes were seen (False)."""
    seen = 0
    while seen <= budget:
        message = await receive()
        if message["type"] != "http.request":
            return False
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
    return False


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(body: bytes | None, receive: Receive, first: Message | None = None) -> Receive:
    """A `receive` that yields the buffered body (or `first`) once, then the real `receive`."""
    pending: list[Message] = (
        [first]
        if first is not None
        else [{"type": "http.request", "body": body or b"", "more_body": False}]
    )

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay
