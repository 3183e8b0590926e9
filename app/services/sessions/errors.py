"""What a session refuses, as exceptions without HTTP (app/api/routes/sessions.py maps them:
NotFound 404, Forbidden 403, Invalid 422, Conflict 409, RateLimited 429, Full 429/503)."""

from __future__ import annotations


class SessionError(Exception):
    """Base: `str(self)` is the sentence a reader is shown; `field` names what was wrong."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFound(SessionError):
    """No session with this code (never made, ended, or expired after its idle time)."""


class Forbidden(SessionError):
    """The presenter token is missing or wrong: only the lecturer's page drives the class."""


class Invalid(SessionError):
    """A value the session cannot take (e.g. a choice the question does not have)."""


class Conflict(SessionError):
    """The question is closed (revealed) or not the open one."""


class RateLimited(SessionError):
    """Too many requests of one kind in a short time; `retry_after` seconds to wait."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Full(SessionError):
    """A cap is reached: `scope` "server" (sessions per server) or "session" (students)."""

    def __init__(self, message: str, scope: str) -> None:
        super().__init__(message)
        self.scope = scope
