"""What a session store does: the record of each session, its event log and the answers.

Two stores implement it: `MemoryStore` (this process only, the default) and `RedisStore`
(`FFN_LAB_REDIS_URL`: every process behind a proxy sees the same sessions and events).
A record holds: token (SHA-256 of the presenter token), state (the page state), version,
question (the open or last question, with its state), reveal (the FFN's answer and the
class's counts, once revealed), and the ids of the events that set them (state_event,
question_event, reveal_event).
"""

from __future__ import annotations

from typing import Any, Protocol

from app.services.sessions.events import Event, Hub


class Store(Protocol):
    """The storage and transport of sessions (async; every method may raise OSError-like
    connection errors of its backend)."""

    hub: Hub

    async def start(self) -> None:
        """Connect (and, for Redis, subscribe to every session's events)."""

    async def close(self) -> None:
        """Disconnect."""

    async def create(self, code: str, record: dict[str, Any], max_sessions: int) -> bool:
        """Store a new session; False when `code` is taken.

        Raises:
            Full: `max_sessions` sessions exist already.
        """

    async def get(self, code: str) -> dict[str, Any] | None:
        """The record, or None (never made, ended, or idle for longer than the idle time)."""

    async def update(self, code: str, fields: dict[str, Any]) -> None:
        """Set record fields and keep the session alive for another idle time."""

    async def next_version(self, code: str) -> int:
        """Add one to the state's version and return it."""

    async def publish(self, code: str, type_: str, data: dict[str, Any]) -> Event:
        """Give the event the session's next id, keep it in the log, send it to every
        listener of every process."""

    async def events_after(self, code: str, last_id: int) -> list[Event] | None:
        """Logged events with id > `last_id`, oldest first; None when the log no longer
        reaches back that far."""

    async def close_question(self, code: str, qid: str) -> None:
        """Take no more answers to `qid` (atomically with respect to `set_answer`)."""

    async def set_answer(
        self, code: str, qid: str, device: str, choice: str, max_answers: int
    ) -> None:
        """Record (or change) `device`'s answer to question `qid`, in one atomic step with
        the checks below.

        Raises:
            NotFound: the session is gone. Conflict: `qid` is closed (revealed).
            Full: `max_answers` devices have answered already (a new device).
        """

    async def answers(self, code: str, qid: str) -> dict[str, str]:
        """device -> choice for question `qid`."""

    async def add_listener(self, code: str, listener: str, ttl: float) -> int:
        """Count `listener` among the session's listeners for `ttl` seconds (call again to
        keep it); returns how many listeners the session has now, in every process."""

    async def remove_listener(self, code: str, listener: str) -> None:
        """Stop counting `listener`."""

    async def delete(self, code: str) -> None:
        """Forget the session: record, log, answers, listeners."""
