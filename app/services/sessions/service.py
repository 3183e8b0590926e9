"""Class sessions: a lecturer's page state followed by students, and predict-then-reveal
questions. Plain asyncio; the HTTP layer is app/api/routes/sessions.py.

Lecturer actions need the presenter token (`Forbidden` otherwise). Every change is an
`Event` (state, question, tally, reveal, ended) sent to every listener; a new listener first
gets the current state, the open question and its reveal (or, with `last_event_id`, the
events it missed while they are still in the log). Caps and rates come from `Settings`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from cachetools import TTLCache

from app.config import Settings
from app.services.sessions.codes import new_code, new_token, token_hash, token_matches
from app.services.sessions.errors import Forbidden, Full, Invalid, NotFound
from app.services.sessions.events import Event
from app.services.sessions.limits import RateLimiter
from app.services.sessions.store import Store

ENDED_IDLE = "idle"
ENDED_BY_LECTURER = "lecturer"


@dataclass(frozen=True)
class Created:
    """A new session: its code and the presenter token (shown once, to the lecturer)."""

    code: str
    token: str


class Listener:
    """One open event stream: `initial` events, then live ones until the session ends."""

    def __init__(self, service: SessionService, code: str, key: str) -> None:
        self.service = service
        self.code = code
        self.key = key
        self.queue = service.hub.join(code)
        self.initial: list[Event] = []
        self.last_id = 0

    async def events(self) -> AsyncIterator[Event | None]:
        """The events to send, oldest first; None is a keep-alive (nothing happened).

        Stops after `ended`, when the session is gone, or when this listener fell too far
        behind (the browser reconnects with Last-Event-ID)."""
        service = self.service
        try:
            for event in self.initial:
                self.last_id = max(self.last_id, event.id)
                yield event
            while True:
                if self.queue.empty():
                    try:
                        item = await asyncio.wait_for(self.queue.get(), service.keepalive_s)
                    except TimeoutError:
                        if await service.store.get(self.code) is None:
                            yield Event(
                                self.code, self.last_id + 1, "ended", {"reason": ENDED_IDLE}
                            )
                            return
                        await service.store.add_listener(self.code, self.key, service.listener_ttl)
                        yield None
                        continue
                else:
                    item = self.queue.get_nowait()  # busy: no timer per event
                if item is None:
                    return
                if item.id <= self.last_id and item.type != "ended":
                    continue
                self.last_id = max(self.last_id, item.id)
                yield item
                if item.type == "ended":
                    return
        finally:
            await self.close()

    async def close(self) -> None:
        """Leave the hub and the session's count of listeners."""
        self.service.hub.leave(self.code, self.queue)
        # the store may be gone (shutting down): nothing to undo then
        with contextlib.suppress(Exception):
            await self.service.store.remove_listener(self.code, self.key)


class SessionService:
    """Sessions over a `Store` (memory or Redis); one per process."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self.hub = store.hub
        self.keepalive_s = settings.session_keepalive_s
        self.listener_ttl = 3 * settings.session_keepalive_s
        self.answer_limit = RateLimiter(
            settings.session_answer_rate, settings.session_answer_burst, "answers from this device"
        )
        self.state_limit = RateLimiter(
            settings.session_state_rate, settings.session_state_burst, "lecturer changes"
        )
        self.connect_limit = RateLimiter(
            settings.session_connect_rate, settings.session_connect_burst, "connections"
        )
        self.create_limit = RateLimiter(
            settings.session_create_rate, settings.session_create_burst, "new sessions"
        )
        self._tally_due: set[str] = set()
        self._choices: TTLCache[tuple[str, str], tuple[str, ...]] = TTLCache(4096, ttl=3600)
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Connect the store."""
        await self.store.start()

    async def close(self) -> None:
        """Cancel pending tallies and disconnect the store."""
        for task in list(self._tasks):
            task.cancel()
        await self.store.close()

    # ---- the lecturer ----

    async def create(self, client: str, state: dict[str, Any] | None = None) -> Created:
        """A new session with a fresh code and presenter token.

        Raises:
            RateLimited: this client made too many sessions just now.
            Full: the server's session cap is reached.
        """
        self.create_limit.check(client)
        token = new_token()
        record = {
            "token": token_hash(token),
            "state": state or {},
            "version": 0,
            "question": None,
            "reveal": None,
            "closed": "",
            "created": time.time(),
            "state_event": 0,
            "question_event": 0,
            "reveal_event": 0,
        }
        for _ in range(16):
            code = new_code()
            if await self.store.create(code, record, self.settings.max_sessions):
                return Created(code, token)
        raise Full("No free session code was found; try again.", scope="server")

    async def require(self, code: str) -> dict[str, Any]:
        """The session's record.

        Raises:
            NotFound: no such session (ended, expired or never made).
        """
        record = await self.store.get(code)
        if record is None:
            raise NotFound(
                f"There is no class session {code}: check the code, or the session has ended.",
                field="code",
            )
        return record

    async def authorize(self, code: str, token: str | None) -> dict[str, Any]:
        """The record, when `token` is this session's presenter token.

        Raises:
            NotFound: no such session. Forbidden: no token, or not this session's.
        """
        record = await self.require(code)
        if not token_matches(token, str(record["token"])):
            raise Forbidden(
                "Only the lecturer's page can do this (it needs the session's presenter token).",
                field="authorization",
            )
        return record

    async def is_presenter(self, code: str, token: str) -> bool:
        """True when `token` is session `code`'s presenter token (False for an unknown code)."""
        record = await self.store.get(code)
        return record is not None and token_matches(token, str(record["token"]))

    async def put_state(self, code: str, token: str | None, state: dict[str, Any]) -> int:
        """Publish the lecturer's page state; returns its version (1, 2, ...).

        Raises:
            NotFound, Forbidden: as `authorize`. RateLimited: too many changes per second.
        """
        await self.authorize(code, token)
        self.state_limit.check(code)
        version = await self.store.next_version(code)
        # stored before it is sent: a screen that connects in between reads the new state
        await self.store.update(code, {"state": state})
        event = await self.store.publish(code, "state", {"state": state, "version": version})
        await self.store.update(code, {"state_event": event.id})
        return version

    async def open_question(
        self, code: str, token: str | None, question: dict[str, Any], public: dict[str, Any]
    ) -> Event:
        """Open `question` (its `public` part goes to every screen); closes the last one.

        Raises:
            NotFound, Forbidden: as `authorize`. RateLimited: as a state change.
        """
        await self.authorize(code, token)
        self.state_limit.check(code)
        # stored before it is sent: an answer right after the event finds the question
        await self.store.update(
            code, {"question": question, "qid": question["id"], "reveal": None, "closed": ""}
        )
        event = await self.store.publish(code, "question", {"question": public})
        await self.store.update(code, {"question_event": event.id})
        return event

    async def question(self, code: str, qid: str) -> dict[str, Any]:
        """The session's current question (all of it, its state included).

        Raises:
            NotFound: no such session, or `qid` is not its current question.
        """
        record = await self.require(code)
        question = record.get("question")
        if not question or question.get("id") != qid:
            raise NotFound(
                f"Question {qid} is not this session's current question.", field="question_id"
            )
        return dict(question)

    async def reveal(
        self, code: str, token: str | None, qid: str, answer: dict[str, Any]
    ) -> dict[str, Any]:
        """Close question `qid` and show the FFN's `answer` beside the class's counts.

        Raises:
            NotFound, Forbidden: as `authorize` (and an unknown question).
        """
        await self.authorize(code, token)
        question = await self.question(code, qid)
        # closed first, counted after: every answer is either counted or refused (409)
        await self.store.close_question(code, qid)
        counts, total = await self.counts(code, question)
        data = {"question_id": qid, "answer": answer, "counts": counts, "total": total}
        event = await self.store.publish(code, "reveal", data)
        await self.store.update(code, {"reveal": data, "reveal_event": event.id})
        return data

    async def end(self, code: str, token: str | None) -> None:
        """End the session: every screen gets `ended`, then nothing of it is kept.

        Raises:
            NotFound, Forbidden: as `authorize`.
        """
        await self.authorize(code, token)
        await self.store.publish(code, "ended", {"reason": ENDED_BY_LECTURER})
        await self.store.delete(code)

    # ---- the students ----

    async def answer(self, code: str, qid: str, choice: str, device: str) -> None:
        """Record `device`'s choice (changeable until the reveal); the lecturer's tally
        follows within `session_tally_interval_s`.

        Raises:
            NotFound: no session, or not its current question. Conflict: already revealed.
            Invalid: a choice the question does not have. RateLimited, Full.
        """
        self.answer_limit.check((code, device))
        ids = self._choices.get((code, qid))
        if ids is None:  # a question never changes: its choices are read once per process
            record = await self.require(code)
            question = record.get("question")
            if not question or question.get("id") != qid:
                raise NotFound(
                    f"Question {qid} is not this session's current question.", field="question_id"
                )
            ids = tuple(c["id"] for c in question["choices"])
            self._choices[(code, qid)] = ids
        if choice not in ids:
            raise Invalid(f"choice must be one of {', '.join(ids)}; got {choice!r}.", "choice")
        await self.store.set_answer(
            code, qid, device, choice, self.settings.max_students_per_session * 2
        )
        self._tally_soon(code, qid)

    async def counts(self, code: str, question: dict[str, Any]) -> tuple[dict[str, int], int]:
        """Answers per choice id (every choice listed, zeros too) and their total."""
        answers = await self.store.answers(code, question["id"])
        counts = {c["id"]: 0 for c in question["choices"]}
        for choice in answers.values():
            if choice in counts:
                counts[choice] += 1
        return counts, sum(counts.values())

    def _tally_soon(self, code: str, qid: str) -> None:
        if code in self._tally_due:
            return
        self._tally_due.add(code)
        task = asyncio.create_task(self._tally_later(code, qid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _tally_later(self, code: str, qid: str) -> None:
        try:
            await asyncio.sleep(self.settings.session_tally_interval_s)
        finally:
            self._tally_due.discard(code)
        record = await self.store.get(code)
        question = record.get("question") if record else None
        if not question or question.get("id") != qid:
            return
        counts, total = await self.counts(code, question)
        await self.store.publish(
            code, "tally", {"question_id": qid, "counts": counts, "total": total}
        )

    async def listen(self, code: str, client: str, last_event_id: int | None) -> Listener:
        """Open an event stream on session `code` for `client` (a device id or address).

        Raises:
            RateLimited: this client connects too often. NotFound: no such session.
            Full: the session has `max_students_per_session` listeners already.
        """
        self.connect_limit.check((code, client))
        await self.require(code)  # before counting: an unknown code leaves nothing behind
        key = f"{client}:{secrets.token_hex(4)}"
        count = await self.store.add_listener(code, key, self.listener_ttl)
        if count > self.settings.max_students_per_session + 1:  # + 1: the lecturer's own page
            await self.store.remove_listener(code, key)
            raise Full(
                f"This class session has {self.settings.max_students_per_session} students already "
                "(the limit): ask the lecturer.",
                scope="session",
            )
        listener = Listener(self, code, key)  # joins the hub before reading: nothing missed
        try:
            record = await self.require(code)
            missed = None
            if last_event_id is not None:
                missed = await self.store.events_after(code, last_event_id)
            listener.initial = missed if missed is not None else _snapshot(code, record)
            if missed is not None:
                listener.last_id = last_event_id or 0
        except BaseException:
            await listener.close()
            raise
        return listener


def _snapshot(code: str, record: dict[str, Any]) -> list[Event]:
    """The current state, question and reveal as events (with the ids that set them)."""
    version = int(record.get("version", 0))
    events = [
        Event(
            code,
            int(record.get("state_event", 0)),
            "state",
            {"state": record.get("state") or {}, "version": version},
        )
    ]
    question = record.get("question")
    if question:
        public = {k: question[k] for k in ("id", "kind", "prompt", "params", "choices")}
        events.append(
            Event(code, int(record.get("question_event", 0)), "question", {"question": public})
        )
        reveal = record.get("reveal")
        if reveal and reveal.get("question_id") == question["id"]:
            events.append(Event(code, int(record.get("reveal_event", 0)), "reveal", reveal))
    return events
