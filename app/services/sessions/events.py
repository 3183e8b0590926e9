"""Events of a session and the local fan-out to this process's listeners.

Every event has a per-session increasing `id` (the SSE `id:` line; `Last-Event-ID` resumes
after it), a `type` (state, question, tally, reveal, ended) and JSON `data`. The `Hub` keeps
one bounded `asyncio.Queue` per listener: a listener that falls `queue_size` events behind is
dropped (its queue gets `None`), and its browser reconnects and resumes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

EVENT_TYPES = ("state", "question", "tally", "reveal", "ended")


@dataclass(frozen=True)
class Event:
    """One event of session `code`."""

    code: str
    id: int
    type: str
    data: dict[str, Any]

    @cached_property
    def wire(self) -> bytes:
        """The event as server-sent-event bytes (id, event, data), made once for every
        listener."""
        return b"id: %d\nevent: %s\ndata: %s\n\n" % (
            self.id,
            self.type.encode(),
            orjson.dumps(self.data),
        )

    @cached_property
    def student_wire(self) -> bytes:
        """The event as a student's stream carries it: a `tally` says how many answered
        (`question_id`, `total`) but not what they chose, so that no one's prediction leans on
        the class's before the reveal (whose event carries the counts); every other event is
        `wire`. The lecturer's stream gets `wire`."""
        if self.type != "tally":
            return self.wire
        data = {k: v for k, v in self.data.items() if k != "counts"}
        return b"id: %d\nevent: tally\ndata: %s\n\n" % (self.id, orjson.dumps(data))

    def to_json(self) -> bytes:
        """The event as JSON (for a store or a pub/sub message)."""
        return orjson.dumps(
            {"code": self.code, "id": self.id, "type": self.type, "data": self.data}
        )

    @classmethod
    def from_json(cls, raw: bytes | str) -> Event:
        """The inverse of `to_json`."""
        d = orjson.loads(raw)
        return cls(code=str(d["code"]), id=int(d["id"]), type=str(d["type"]), data=dict(d["data"]))


class Hub:
    """This process's listeners, by session code."""

    def __init__(self, queue_size: int = 256) -> None:
        self.queue_size = queue_size
        self._listeners: dict[str, set[asyncio.Queue[Event | None]]] = {}

    def join(self, code: str) -> asyncio.Queue[Event | None]:
        """A new listener's queue for `code`."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue(self.queue_size)
        self._listeners.setdefault(code, set()).add(queue)
        return queue

    def leave(self, code: str, queue: asyncio.Queue[Event | None]) -> None:
        """Forget a listener."""
        listeners = self._listeners.get(code)
        if listeners is None:
            return
        listeners.discard(queue)
        if not listeners:
            del self._listeners[code]

    def count(self, code: str) -> int:
        """This process's listeners of `code`."""
        return len(self._listeners.get(code, ()))

    def deliver(self, event: Event) -> None:
        """Put `event` in every queue of its session; a full queue is closed (None)."""
        for queue in list(self._listeners.get(event.code, ())):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                self.leave(event.code, queue)
                _close(queue)

    def close_all(self, code: str) -> None:
        """End every listener of `code` (after its `ended` event)."""
        for queue in list(self._listeners.get(code, ())):
            _close(queue)
        self._listeners.pop(code, None)


def _close(queue: asyncio.Queue[Event | None]) -> None:
    while True:
        try:
            queue.put_nowait(None)
            return
        except asyncio.QueueFull:
            queue.get_nowait()
