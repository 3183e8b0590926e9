"""Error responses: 422 with a message that names the field, the value and what is allowed.

Never a traceback, never a file path; a submitted value is echoed only when it is short.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from app.api.encoding import json_response

_MAX_ECHO = 200


def _clean(error: dict[str, Any]) -> dict[str, Any]:
    msg = str(error.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ")
    out: dict[str, Any] = {"loc": list(error.get("loc", ())), "msg": msg, "type": error.get("type")}
    value = error.get("input")
    text = repr(value)
    if value is not None and len(text) <= _MAX_ECHO and not isinstance(value, dict):
        out["input"] = value if isinstance(value, int | float | str | bool) else text
    return out


async def validation_error(request: Request, exc: Exception) -> Response:
    """422 for any request that does not validate."""
    if not isinstance(exc, RequestValidationError):  # pragma: no cover - wiring guard
        raise exc
    return json_response({"detail": [_clean(e) for e in exc.errors()]}, status_code=422)


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(RequestValidationError, validation_error)
