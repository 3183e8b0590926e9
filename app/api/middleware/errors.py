"""Error responses: 422 with a message that names the field, the value and what is allowed.

Never a traceback, never a file path; a submitted value is echoed only when it is short.
An unexpected exception becomes a 500 JSON answer with a fixed message (the traceback goes
to the server's log only), sent inside the security-headers middleware so that it carries
the same headers as every other response.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.body_errors import parse_refusal
from app.api.encoding import json_response
from app.lab.errors import InvalidValue, ModelUnavailable

_MAX_ECHO = 200
_MAX_JSON_INT = 2**53  # larger integers are echoed as strings (orjson and JS stop at 64/53 bits)

INTERNAL_ERROR = (
    "internal error: the server could not answer this request. It has been logged; "
    "please tell the person running FFN Lab what you sent."
)


def echo(value: Any) -> Any:
    """`value` as it may appear in an error body: JSON-safe and short, or None to omit it."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) <= _MAX_JSON_INT else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, str):
        return value if len(value) <= _MAX_ECHO else None
    if isinstance(value, dict):
        return None
    try:
        text = repr(value)
    except RecursionError:  # a body nested deeper than the interpreter's stack: not echoed
        return None
    return text if len(text) <= _MAX_ECHO else None


def _message(error: dict[str, Any]) -> str:
    kind = error.get("type")
    msg = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    loc = tuple(error.get("loc", ()))
    if kind == "json_invalid":
        reason = (error.get("ctx") or {}).get("error", "")
        return (
            f"the request body is not valid JSON ({reason})"
            if reason
            else ("the request body is not valid JSON")
        )
    if kind in ("model_attributes_type", "dict_type") and loc == ("body",):
        return "the request body must be a JSON object, sent as Content-Type: application/json"
    if kind == "missing" and loc == ("body",):
        return "the request body is empty: send a JSON object"
    if kind == "extra_forbidden" and loc:
        return f"unknown field {loc[-1]!r}: it is not part of this endpoint's request body"
    got = _display(error.get("input"))
    if kind != "value_error" and got is not None:
        return f"{msg} (got {got})"
    return msg


def _display(value: Any) -> str | None:
    """A short text of a submitted scalar for a message, or None for containers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} digits)"
    if isinstance(value, float):
        shown = echo(value)
        return shown if isinstance(shown, str) else repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"
    return None


def safe_text(text: str) -> str:
    """`text` with lone surrogates (valid in JSON, not in UTF-8) written as \\udxxx escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean(error: dict[str, Any]) -> dict[str, Any]:
    shown = echo(error.get("input"))
    out: dict[str, Any] = {
        "loc": [safe_text(p) if isinstance(p, str) else p for p in error.get("loc", ())],
        "msg": safe_text(_message(error)),
        "type": error.get("type"),
    }
    if shown is not None:
        out["input"] = safe_text(shown) if isinstance(shown, str) else shown
    # A refusal the page can say in its own language: a stable code and its values
    cause = (error.get("ctx") or {}).get("error")
    code = getattr(cause, "code", None)
    if isinstance(code, str):
        out["code"] = code
        out["params"] = {k: echo(v) for k, v in getattr(cause, "params", {}).items()}
    return out


async def validation_error(request: Request, exc: Exception) -> Response:
    """422 for any request that does not validate."""
    if not isinstance(exc, RequestValidationError):  # pragma: no cover - wiring guard
        raise exc
    return json_response({"detail": [_clean(e) for e in exc.errors()]}, status_code=422)


class InternalErrorMiddleware:
    """Turns an unhandled exception into 500 JSON {"detail": INTERNAL_ERROR}.

    The exception is re-raised after the answer is sent so that the server logs it; the
    client never sees a traceback, an exception text or a file path.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def track(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, track)
        except Exception:
            if not started:
                await json_response({"detail": INTERNAL_ERROR}, status_code=500)(
                    scope, receive, send
                )
            raise


async def http_error(request: Request, exc: Exception) -> Response:
    """FastAPI's HTTP errors, except that a body that is not UTF-8 is a 422 like other non-JSON.

    FastAPI answers such a body with a vague 400 "There was an error parsing the body"; so
    it does a body nested deeper than the JSON parser reads or with an integer longer than
    Python reads (`app.api.body_errors`): both are 422s naming the limit.
    """
    cause = exc.__cause__
    if isinstance(exc, StarletteHTTPException) and isinstance(cause, UnicodeDecodeError):
        msg = f"the request body is not valid JSON: it is not UTF-8 text (byte {cause.start})"
        error = {"loc": ["body"], "msg": msg, "type": "json_invalid"}
        return json_response({"detail": [error]}, status_code=422)
    if isinstance(exc, StarletteHTTPException) and exc.status_code == 400 and cause is not None:
        # Nested too deep or a number too long: the body was read (and kept) by FastAPI.
        refusal = parse_refusal(cause, await request.body())
        if refusal is not None:
            return json_response({"detail": [refusal]}, status_code=422)
    return await http_exception_handler(request, exc)  # type: ignore[arg-type]


async def invalid_value(request: Request, exc: Exception) -> Response:
    """An experiment's `InvalidValue` is the 422 Pydantic would give for that body field."""
    if not isinstance(exc, InvalidValue):  # pragma: no cover - wiring guard
        raise exc
    error: dict[str, Any] = {
        "loc": ("body", exc.field),
        "msg": exc.message,
        "type": "value_error",
        "ctx": {"error": exc},
    }
    if exc.value is not None:
        error["input"] = exc.value
    return await validation_error(request, RequestValidationError([error]))


async def model_unavailable(request: Request, exc: Exception) -> Response:
    """The pretrained weights package is missing: 503 {"detail": how to install it}."""
    return await http_error(request, StarletteHTTPException(status_code=503, detail=str(exc)))


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(InvalidValue, invalid_value)
    app.add_exception_handler(ModelUnavailable, model_unavailable)
