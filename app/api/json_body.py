"""JSON request bodies parsed by orjson, with the standard library's answer for anything
orjson refuses (so that every body is read as before, and every error reads as before).

A request that sends its own tokens or weights carries tens of thousands of numbers: at
32 x 1024 tokens (340 kB of JSON) `json.loads` takes ~14 ms on this machine and
`orjson.loads` ~1.2 ms, while the FFN itself takes ~5 ms. orjson accepts strict JSON only;
where it refuses (NaN or Infinity, which `json.loads` reads and the request's own checks
then refuse by name; integers beyond 64 bits; malformed JSON) the body is parsed again by
`json.loads`, whose value or `JSONDecodeError` FastAPI turns into the same answer as
always. FastAPI's documented pattern: a Request subclass through an APIRoute subclass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute

from app.api import array_body
from app.api.body_errors import max_depth, nesting_depth

_MARKS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
"""Every digit as "0", every other byte as a space."""
_LONG = b"0" * 19


def long_digit_run(body: bytes) -> bool:
    """True when `body` has a run of 19 or more digits: an integer orjson might read as a
    float (beyond 64 bits). bytes.translate and a substring search, both in C: ~1 ms on
    340 kB of numbers (a regex took ~14 ms)."""
    return _LONG in body.translate(_MARKS)


def loads(body: bytes) -> Any:
    """The value `json.loads(body)` gives (or its error), by orjson when it can.

    orjson reads bodies nested deeper than `json.loads` does (1,024 levels against ~990):
    a body nested deeper than `max_depth()` raises the RecursionError `json.loads` would,
    which the API names as too deep (`app.api.body_errors`). The limit is measured once, so
    the answer does not depend on how deep the caller's stack is (json.loads' own limit
    does). Counting brackets first keeps the usual body on the fast path.
    """
    if not long_digit_run(body):
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
        else:
            limit = max_depth()
            if body.count(b"[") + body.count(b"{") <= limit or nesting_depth(body) <= limit:
                return value
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON body")
    return json.loads(body)


class FastJsonRequest(Request):
    """A Request whose `json()` parses with orjson first, then `json.loads` if refused; a
    large body of a model with `array_fields` is read by `app.api.array_body` first."""

    array_fields: Mapping[str, int] = {}

    async def json(self) -> Any:
        if not hasattr(self, "_fast_json"):
            body = await self.body()
            value = array_body.read(body, self.array_fields)
            self._fast_json = loads(body) if value is None else value
        return self._fast_json


class FastJsonRoute(APIRoute):
    """An APIRoute whose handler reads JSON bodies with `FastJsonRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        reads_json = self.body_field is not None
        model = self.body_field.field_info.annotation if self.body_field is not None else None
        array_fields: Mapping[str, int] = getattr(model, "array_fields", {})

        async def route(request: Request) -> Response:
            fast = FastJsonRequest(request.scope, request.receive)
            fast.array_fields = array_fields
            content_type = request.headers.get("content-type", "")
            if reads_json and (not content_type or "json" in content_type):
                # A JSON body is read through the request Starlette made, which keeps it:
                # its error handlers get that request (a body nested too deep is named from
                # it). Other bodies (a layer file's form) stream as FastAPI reads them, and
                # an endpoint without a body model (the layer upload) reads its own.
                fast._body = await request.body()
            return await handler(fast)

        return route
