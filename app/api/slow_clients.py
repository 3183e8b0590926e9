"""Slow and idle clients are cut: uvicorn's HTTP protocol with header and body read timeouts.

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`, 5 s) but not a
client that opens a connection and sends nothing, or sends its request one byte a second:
such connections stayed open forever. `ReadTimeoutProtocol` (uvicorn's httptools protocol,
chosen with `--http app.api.slow_clients:ReadTimeoutProtocol`; `ffn-lab` uses it) adds:

- a header timeout (`Settings.header_timeout_s`, 10 s): from the connection's opening, or a
  request's first byte, to the end of its headers;
- a body timeout (`Settings.body_timeout_s`, 30 s) with a minimum rate: after the headers,
  a body still arriving after `body_timeout_s` must have come at
  `body_min_rate_bytes` per second on average (64 KiB/s: a 64 MiB upload may take 17 min),
  else the connection is cut.

A cut request gets `408 Request Timeout` (connection: close) when no answer was started,
else the connection is closed. Behind nginx the proxy's `client_header_timeout` and
`client_body_timeout` cut slow clients first (deploy/nginx.conf).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.config import get_settings

TIMEOUT_BODY = b"the request did not arrive in time; send it again\n"


class ReadTimeoutProtocol(HttpToolsProtocol):
    """HttpToolsProtocol that cuts a request whose headers or body arrive too slowly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.header_timeout = settings.header_timeout_s
        self.body_timeout = settings.body_timeout_s
        self.body_min_rate = settings.body_min_rate_bytes
        self._read_timer: asyncio.TimerHandle | None = None
        self._body_started = 0.0
        self._body_bytes = 0

    # -- timers -----------------------------------------------------------------------------
    def _arm(self, delay: float, callback: Any) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(delay, callback)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _cut(self) -> None:
        """The request did not arrive in time: 408 if nothing was answered yet, then close."""
        self._read_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(
                b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"connection: close\r\ncontent-length: "
                + str(len(TIMEOUT_BODY)).encode()
                + b"\r\n\r\n"
                + TIMEOUT_BODY
            )
        if self.cycle is not None:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.close()

    def _body_check(self) -> None:
        elapsed = time.monotonic() - self._body_started
        if self._body_bytes >= self.body_min_rate * elapsed:
            self._read_timer = self.loop.call_later(1.0, self._body_check)
        else:
            self._cut()

    # -- uvicorn's hooks ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_timeout, self._cut)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm(self.header_timeout, self._cut)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._body_started = time.monotonic()
        self._body_bytes = 0
        self._arm(self.body_timeout, self._body_check)

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        # The keep-alive timer takes over until the next request's first byte
        self._disarm()
        super().on_response_complete()
