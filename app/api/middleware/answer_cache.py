"""Answers to repeated requests from memory (pure ASGI middleware).

Every POST endpoint listed in `CACHED_PATHS` is a pure function of its body: seeded weights,
seeded tokens, seeded dropout masks, uploaded layers named by the hash of their file. The
same path with the same body bytes therefore gets the same answer bytes, and a class of 50
students on one preset sends the same bodies again and again. This middleware keeps the
encoded 200 answers of those endpoints in an LRU of at most `max_bytes` (the setting
`answer_cache_bytes`; 0 turns it off) and answers a repeat without validating or computing
anything. Identical requests that arrive while the first is still being computed wait for
its answer instead of computing it again (a miss that fails, or is refused, lets each of
them compute its own).

A request with `cache-control: no-cache` is computed whatever is held (the benchmarks send
it to time the computation). Answers carry `x-ffn-lab-cache: miss` (computed now) or `hit`
(from memory). A hit drops the computed answer's `server-timing` header: nothing was timed.

Not cached: training streams, the snapshot page (it is dated), uploads, /api/neuron (see
`CACHED_PATHS`), anything that is not a 200 JSON answer, and bodies over
`max_body_key_bytes` (a request that sends its own weights is rarely repeated).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CACHED_PATHS = frozenset(
    f"/api/{name}"
    for name in (
        "forward",
        "perturb",
        "stack",
        "cheaper",
        "tokenize",
        "attention-vs-ffn",
        "block",
        "variants",
        "budget",
        "conv1d-check",
        "dropout",
        "misconceptions",
    )
)
"""Endpoints whose answer depends on nothing but the request body. Not /api/neuron: its
`corpus_index` says whether the corpus index was read from disk or memory this time."""

CACHE_HEADER = b"x-ffn-lab-cache"


@dataclass(frozen=True)
class Answer:
    """One stored answer: its response headers (without `server-timing`) and body."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    @property
    def nbytes(self) -> int:
        """What the entry holds, in bytes (body and headers)."""
        return len(self.body) + sum(len(k) + len(v) for k, v in self.headers)


class AnswerCacheMiddleware:
    """LRU of encoded answers keyed by (path, query, content type; hash of the body): only a
    200 is kept, so a request that would be refused is never answered from memory; see the
    module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        max_body_key_bytes: int = 64 * 1024,
        paths: frozenset[str] = CACHED_PATHS,
    ) -> None:
        """`max_bytes`: most bytes of answers kept (0: off); one answer may take an eighth."""
        self.app = app
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_bytes // 8
        self.max_body_key_bytes = max_body_key_bytes
        self.paths = paths
        self._answers: OrderedDict[tuple[str, bytes], Answer] = OrderedDict()
        self._bytes = 0
        self._inflight: dict[tuple[str, bytes], asyncio.Future[Answer | None]] = {}
        self.hits = 0
        self.misses = 0

    @property
    def current_bytes(self) -> int:
        """Bytes of answers held now."""
        return self._bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            self.max_bytes <= 0
            or scope["type"] != "http"
            or scope.get("method") != "POST"
            or path not in self.paths
        ):
            await self.app(scope, receive, send)
            return
        messages, body = await _read_body(receive)
        if body is None or len(body) > self.max_body_key_bytes:
            await self.app(scope, _replay(messages, receive), send)
            return
        key = (_request_key(scope), _digest(body))
        fresh = _asks_fresh(scope)
        answer = None if fresh else self._answers.get(key)
        if answer is None and not fresh and (flight := self._inflight.get(key)) is not None:
            answer = await asyncio.shield(flight)
        if answer is not None:
            if key in self._answers:
                self._answers.move_to_end(key)
            self.hits += 1
            await _send_answer(answer, send)
            return
        await self._compute(key, scope, _replay(messages, receive), send)

    async def _compute(
        self, key: tuple[str, bytes], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Run the app; keep its answer when it is a 200 JSON answer small enough to hold."""
        self.misses += 1
        leader = key not in self._inflight
        flight: asyncio.Future[Answer | None] | None = None
        if leader:  # identical requests arriving meanwhile wait for this one's answer
            flight = asyncio.get_running_loop().create_future()
            self._inflight[key] = flight
        status = 0
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        size = 0
        keep = leader

        async def capture(message: Message) -> None:
            nonlocal status, size, keep
            if message["type"] == "http.response.start":
                status = message["status"]
                headers.extend(message.get("headers", []))
                keep = keep and status == 200 and _storable(headers)
                if keep:
                    message["headers"] = [*headers, (CACHE_HEADER, b"miss")]
            elif message["type"] == "http.response.body" and keep:
                body = message.get("body", b"")
                size += len(body)
                keep = size <= self.max_entry_bytes
                chunks.append(body)
            await send(message)

        answer: Answer | None = None
        try:
            await self.app(scope, receive, capture)
            if keep and status == 200:
                answer = Answer(
                    tuple((k, v) for k, v in headers if k != b"server-timing"), b"".join(chunks)
                )
                self._store(key, answer)
        finally:
            if flight is not None:
                del self._inflight[key]
                flight.set_result(answer)

    def _store(self, key: tuple[str, bytes], answer: Answer) -> None:
        old = self._answers.pop(key, None)
        if old is not None:
            self._bytes -= old.nbytes
        self._answers[key] = answer
        self._bytes += answer.nbytes
        while self._bytes > self.max_bytes and self._answers:
            _, dropped = self._answers.popitem(last=False)
            self._bytes -= dropped.nbytes


DECIDING_HEADERS = (b"content-type",)
"""Request headers that decide an answer besides the path, query and body: the content type
says whether the body is read as JSON (`text/plain` or `image/png` is a 422)."""


def _request_key(scope: Scope) -> str:
    """The path, the query string and the deciding headers' values of a request."""
    query = scope.get("query_string", b"").decode("latin-1")
    headers = [
        value.decode("latin-1")
        for name, value in scope.get("headers", [])
        if name.lower() in DECIDING_HEADERS
    ]
    return f"{scope.get('path', '')}?{query}\n" + "\n".join(headers)


def _digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=20).digest()


def _asks_fresh(scope: Scope) -> bool:
    """The request says `cache-control: no-cache` (or no-store): compute it now."""
    for name, value in scope.get("headers", []):
        if name == b"cache-control" and (b"no-cache" in value or b"no-store" in value):
            return True
    return False


def _storable(headers: list[tuple[bytes, bytes]]) -> bool:
    """A JSON answer the app did not mark `no-store`."""
    values = {k.lower(): v for k, v in headers}
    return values.get(b"content-type", b"").startswith(b"application/json") and (
        b"no-store" not in values.get(b"cache-control", b"")
    )


async def _read_body(receive: Receive) -> tuple[list[Message], bytes | None]:
    """Every request message up to the end of the body, and the body (None: the client left
    before it ended)."""
    messages: list[Message] = []
    chunks: list[bytes] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return messages, b"".join(chunks)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that hands out `messages` first, then the real `receive`."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


async def _send_answer(answer: Answer, send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [*answer.headers, (CACHE_HEADER, b"hit")],
        }
    )
    await send({"type": "http.response.body", "body": answer.body})
