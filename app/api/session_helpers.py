"""What the class-session routes share (`app.api.routes.sessions`): a session's refusals as
HTTP answers, the session code from a path, the presenter's token and cookie, the client's
address, the QR code of the join link, and the page's panels and questions as students see
them.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import segno
from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError

from app.api.routes.pages import PANEL_SECTIONS, PANELS
from app.lab.questions import Question
from app.services.sessions import (
    Conflict,
    Forbidden,
    Full,
    Invalid,
    NotFound,
    RateLimited,
    SessionError,
    SessionService,
)
from app.services.sessions.codes import normal_code


def _said(what: str) -> dict[str, Any]:
    return {"description": what, "content": {"application/json": {"schema": {"type": "object"}}}}


REFUSALS: dict[int | str, dict[str, Any]] = {
    403: _said("without this session's presenter token (Authorization: Bearer <token>)"),
    404: _said("no such session (never made, ended, or idle too long), or question"),
    409: _said("the question has been revealed: answers are closed"),
    413: _said("the body is over the limit"),
    429: _said("too many requests of this kind (Retry-After), or the session is full"),
    503: _said("the server runs its most sessions"),
}
"""The refusals every session endpoint may answer (documented in /openapi.json)."""


def service(request: Request) -> SessionService:
    """The process's session service, made in the app's lifespan."""
    sessions: SessionService = request.app.state.sessions
    return sessions


@contextmanager
def refusals() -> Iterator[None]:
    """Turn a session's refusal into its HTTP answer (see the module docstring)."""
    try:
        yield
    except Invalid as exc:
        raise RequestValidationError(
            [{"loc": ("body", exc.field or "body"), "msg": str(exc), "type": "value_error"}]
        ) from exc
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from exc
    except Forbidden as exc:
        raise HTTPException(403, str(exc), headers={"WWW-Authenticate": "Bearer"}) from exc
    except Conflict as exc:
        raise HTTPException(409, str(exc)) from exc
    except RateLimited as exc:
        wait = str(max(1, round(exc.retry_after)))
        raise HTTPException(429, str(exc), headers={"Retry-After": wait}) from exc
    except Full as exc:
        raise HTTPException(503 if exc.scope == "server" else 429, str(exc)) from exc
    except SessionError as exc:  # pragma: no cover - every subclass is listed above
        raise HTTPException(400, str(exc)) from exc


def code_of(text: str) -> str:
    """The path's code, normalised; 404 when it cannot be a code."""
    code = normal_code(text)
    if code is None:
        raise HTTPException(
            404, f"There is no class session {text[:12]!r}: a code is 6 letters and digits."
        )
    return code


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def presenter_cookie(code: str) -> str:
    """The cookie that tells the lecturer's own event stream apart (an EventSource sends no
    Authorization header): set by POST /api/sessions, sent only to this session's URLs."""
    return f"ffnlab_presenter_{code}"


def client_of(request: Request) -> str:
    """The client's address (the proxy's X-Forwarded-For first hop when present)."""
    forwarded = request.headers.get("x-forwarded-for")
    if forwarded:
        return forwarded.split(",")[0].strip()[:64]
    return request.client.host if request.client else "unknown"


def qr_svg(url: str) -> str:
    """An SVG QR code of `url` (segno; dark modules on white, 4-module quiet zone)."""
    out = io.BytesIO()
    segno.make(url, error="m").save(
        out, kind="svg", scale=8, dark="#000", light="#fff", xmldecl=False, svgns=True, nl=False
    )
    return out.getvalue().decode("utf-8")


def panels() -> list[str]:
    """The page's panel ids (its `panel=` values)."""
    return [PANEL_SECTIONS.get(name, name) for name in PANELS]


def public_question(question: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored question without its state."""
    if not question:
        return None
    return Question.from_dict(question).public()
