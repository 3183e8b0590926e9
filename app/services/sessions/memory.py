"""The in-process store: nothing to set up; sessions live as long as this process.

Idle sessions are dropped when read after `idle_s` without lecturer activity or answers, and
swept whenever a session is created. Each session keeps at most `log_size` events.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from app.services.sessions.errors import Conflict, Full, NotFound
from app.services.sessions.events import Event, Hub


class MemoryStore:
    """Sessions in a dict of this process (see `Store`)."""

    def __init__(self, hub: Hub, idle_s: float, log_size: int = 64) -> None:
        self.hub = hub
        self.idle_s = idle_s
        self.log_size = log_size
        self._records: dict[str, dict[str, Any]] = {}
        self._active: dict[str, float] = {}
        self._seq: dict[str, int] = {}
        self._log: dict[str, deque[Event]] = {}
        self._answers: dict[str, dict[str, dict[str, str]]] = {}
        self._listeners: dict[str, dict[str, float]] = {}

    async def start(self) -> None:
        """Nothing to connect."""

    async def close(self) -> None:
        """Nothing to disconnect."""

    def _alive(self, code: str) -> bool:
        active = self._active.get(code)
        if active is None:
            return False
        if time.monotonic() - active > self.idle_s:
            self._forget(code)
            return False
        return True

    def _forget(self, code: str) -> None:
        for table in (self._records, self._active, self._seq, self._log, self._answers):
            table.pop(code, None)
        self._listeners.pop(code, None)

    async def create(self, code: str, record: dict[str, Any], max_sessions: int) -> bool:
        for old in list(self._records):
            self._alive(old)
        if code in self._records:
            return False
        if len(self._records) >= max_sessions:
            raise Full(
                f"This server runs {max_sessions} class sessions already (its limit): end one "
                "or try again later.",
                scope="server",
            )
        self._records[code] = dict(record)
        self._active[code] = time.monotonic()
        self._seq[code] = 0
        self._log[code] = deque(maxlen=self.log_size)
        self._answers[code] = {}
        self._listeners[code] = {}
        return True

    async def get(self, code: str) -> dict[str, Any] | None:
        return dict(self._records[code]) if self._alive(code) else None

    async def update(self, code: str, fields: dict[str, Any]) -> None:
        if not self._alive(code):
            return
        self._records[code].update(fields)
        self._active[code] = time.monotonic()

    async def next_version(self, code: str) -> int:
        record = self._records[code]
        record["version"] = int(record.get("version", 0)) + 1
        return int(record["version"])

    async def publish(self, code: str, type_: str, data: dict[str, Any]) -> Event:
        self._seq[code] = self._seq.get(code, 0) + 1
        event = Event(code, self._seq[code], type_, data)
        if code in self._log:
            self._log[code].append(event)
        self.hub.deliver(event)
        return event

    async def events_after(self, code: str, last_id: int) -> list[Event] | None:
        log = self._log.get(code)
        if log is None:
            return None
        if last_id >= self._seq.get(code, 0):
            return []
        if not log or log[0].id > last_id + 1:
            return None
        return [e for e in log if e.id > last_id]

    async def close_question(self, code: str, qid: str) -> None:
        if self._alive(code):
            self._records[code]["closed"] = qid

    async def set_answer(
        self, code: str, qid: str, device: str, choice: str, max_answers: int
    ) -> None:
        # no await below: nothing else runs between the checks and the write
        if not self._alive(code):
            raise NotFound("The class session has ended.", field="code")
        if self._records[code].get("qid") != qid:
            raise NotFound(
                f"Question {qid} is not this session's current question.", field="question_id"
            )
        if self._records[code].get("closed") == qid:
            raise Conflict("This question has been revealed: answers are closed.", "question_id")
        by_question = self._answers.setdefault(code, {})
        answers = by_question.setdefault(qid, {})
        for other in [q for q in by_question if q != qid]:
            del by_question[other]  # only the current question's answers are kept
        if device not in answers and len(answers) >= max_answers:
            raise Full(f"This question has {max_answers} answers already (the limit).", "session")
        answers[device] = choice
        self._active[code] = time.monotonic()

    async def answers(self, code: str, qid: str) -> dict[str, str]:
        return dict(self._answers.get(code, {}).get(qid, {}))

    async def add_listener(self, code: str, listener: str, ttl: float) -> int:
        listeners = self._listeners.setdefault(code, {})
        now = time.monotonic()
        listeners[listener] = now + ttl
        for key in [k for k, until in listeners.items() if until < now]:
            del listeners[key]
        return len(listeners)

    async def remove_listener(self, code: str, listener: str) -> None:
        self._listeners.get(code, {}).pop(listener, None)

    async def delete(self, code: str) -> None:
        self._forget(code)
