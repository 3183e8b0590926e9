"""Class sessions (a lecturer's page followed by students; predict-then-reveal questions).

`make_service(settings)` picks the store: in this process by default, Redis when
`settings.redis_url` (FFN_LAB_REDIS_URL) is set. No HTTP here: app/api/routes/sessions.py.
"""

from __future__ import annotations

from app.config import Settings
from app.services.sessions.errors import (
    Conflict,
    Forbidden,
    Full,
    Invalid,
    NotFound,
    RateLimited,
    SessionError,
)
from app.services.sessions.events import Event, Hub
from app.services.sessions.memory import MemoryStore
from app.services.sessions.service import Created, Listener, SessionService


def make_service(settings: Settings) -> SessionService:
    """The process's session service over the store `settings` choose."""
    hub = Hub()
    if settings.redis_url:
        from app.services.sessions.redis_store import RedisStore  # redis only when asked

        store = RedisStore(settings.redis_url, hub, settings.session_idle_s)
        return SessionService(settings, store)
    return SessionService(settings, MemoryStore(hub, settings.session_idle_s))


__all__ = [
    "Conflict",
    "Created",
    "Event",
    "Forbidden",
    "Full",
    "Hub",
    "Invalid",
    "Listener",
    "MemoryStore",
    "NotFound",
    "RateLimited",
    "SessionError",
    "SessionService",
    "make_service",
]
