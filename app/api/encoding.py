"""Fast JSON responses: orjson with NumPy arrays serialised natively."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Response

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def json_response(content: Any, status_code: int = 200) -> Response:
    """A `application/json` response encoded by orjson (NumPy float32 arrays included)."""
    return Response(
        content=orjson.dumps(content, option=_OPTIONS),
        status_code=status_code,
        media_type="application/json",
    )


def server_timing(seconds: dict[str, float]) -> str:
    """A `Server-Timing` header value (W3C Server Timing): `name;dur=<ms>` per phase.

    Browsers show it in the network panel; benchmarks read it to split a request's time.
    """
    return ", ".join(f"{name};dur={value * 1000:.3f}" for name, value in seconds.items())
