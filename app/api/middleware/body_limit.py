"""Request body size limit (pure ASGI middleware): 413 before a large body is read in full.

A declared `Content-Length` over the limit is refused before a single body byte is kept; a
body within it is handed to the app chunk by chunk as it arrives (the server ends a body at
its declared length; one that ran past the limit anyway would be cut, the app seeing a
disconnect). A body without one (chunked transfer encoding) is read here into one buffer
and refused as soon as the running total passes the limit, then handed on as one message.
Either way the server never holds more than `max_body_bytes` of any request. The limit is
`Settings.max_body_bytes`. The rest of a refused body is read and discarded (up to 8x the
limit, 10 s) before the 413 is sent, so that a client that is still sending can read the
answer instead of a reset connection.

Memory: a declared body is not held here at all, so an app that reads it into one buffer
holds it once. A chunked body is held as one `bytearray` (each chunk freed as soon as it is
copied in), then as the `bytes` handed on: 2 x the body only during that copy. (A list of
chunks joined at the end held 2 x the body for the whole request, and freeing the list
early left the body's worth of small freed chunks resident in the allocator's heap.)
"""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.encoding import json_response


def too_large_message(limit: int, size: int | None) -> str:
    """The 413 message: names the body, its size when known, and the limit."""
    what = f"is {size:,} bytes" if size is not None else "is over the limit"
    return (
        f"request body {what}; the limit is {limit:,} bytes. Send fewer tokens or smaller weights."
    )


class BodySizeLimitMiddleware:
    """Refuses HTTP request bodies over `max_body_bytes` with 413 JSON {"detail": message}."""

    def __init__(
        self, app: ASGIApp, max_body_bytes: int, path_limits: dict[str, int] | None = None
    ) -> None:
        """`path_limits`: a larger (or smaller) limit for some paths, e.g. the upload."""
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.path_limits = path_limits or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.path_limits.get(scope.get("path", ""), self.max_body_bytes)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send, declared, limit=limit)
            return
        if declared is not None:  # the server ends the body at `declared` <= limit bytes
            await self.app(scope, _capped(receive, limit), send)
            return
        # No declared length: read the body here into one buffer, stopping at the limit;
        # then replay it as one message.
        buffer = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect: hand it on
                await self.app(scope, _replay(None, receive, first=message), send)
                return
            more = bool(message.get("more_body", False))
            chunk = message.get("body", b"")
            if len(buffer) + len(chunk) > limit:
                await self._refuse(scope, receive, send, None, ended=not more, limit=limit)
                return
            buffer += chunk
            del message, chunk  # freed now, not when the next chunk replaces it
            if not more:
                break
        replay = _replay(bytes(buffer), receive)  # no name here keeps the body alive
        del buffer
        await self.app(scope, replay, send)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        size: int | None,
        ended: bool = False,
        limit: int | None = None,
    ) -> None:
        limit = self.max_body_bytes if limit is None else limit
        response = json_response({"detail": too_large_message(limit, size)}, status_code=413)
        # Read the rest of the body and throw it away (nothing is kept), so that the client,
        # which is still sending, can read the answer. A body over DRAIN_FACTOR x the limit,
        # or one that does not arrive within DRAIN_SECONDS, is not waited for: close.
        budget = DRAIN_FACTOR * limit
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


def _capped(receive: Receive, limit: int) -> Receive:
    """A `receive` that hands body chunks on as they arrive; a body that runs past `limit`
    bytes (which a server keeping to the declared Content-Length never sends) ends in an
    `http.disconnect` instead of its next chunk."""
    seen = 0

    async def capped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                return {"type": "http.disconnect"}
        return message

    return capped


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
