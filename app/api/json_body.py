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
import re
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute

LONG_DIGITS = re.compile(rb"\d{19}")
"""A run of digits that may be an integer orjson would read as a float (beyond 64 bits)."""


def loads(body: bytes) -> Any:
    """The value `json.loads(body)` gives (or its JSONDecodeError), by orjson when it can."""
    if LONG_DIGITS.search(body) is None:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


class FastJsonRequest(Request):
    """A Request whose `json()` parses with orjson first, then `json.loads` if refused."""

    async def json(self) -> Any:
        if not hasattr(self, "_fast_json"):
            self._fast_json = loads(await self.body())
        return self._fast_json


class FastJsonRoute(APIRoute):
    """An APIRoute whose handler reads JSON bodies with `FastJsonRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(FastJsonRequest(request.scope, request.receive))

        return route
