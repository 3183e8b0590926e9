"""Helpers for class-session tests and the lecture benchmark: an SSE reader over httpx, a
throwaway redis-server on a free port, and a TCP relay whose connections a test can cut."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.serverproc import free_port


@dataclass
class SSE:
    """One server-sent event."""

    id: int | None
    type: str
    data: dict[str, Any]


def iter_events(response: httpx.Response) -> Iterator[SSE]:
    """The events of a streaming `text/event-stream` response, as they arrive."""
    event_id: int | None = None
    kind = "message"
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield SSE(event_id, kind, json.loads("\n".join(data)))
            event_id, kind, data = None, "message", []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                event_id = int(value)
            elif name == "event":
                kind = value
            elif name == "data":
                data.append(value)


def read_until(response: httpx.Response, kind: str, count: int = 1) -> list[SSE]:
    """Events up to and including the `count`-th of type `kind`."""
    out: list[SSE] = []
    seen = 0
    events = getattr(response, "_sse_events", None)
    if events is None:  # one iterator per response: a stream is read once, in pieces
        events = iter_events(response)
        response._sse_events = events  # type: ignore[attr-defined]
    for event in events:
        out.append(event)
        if event.type == kind:
            seen += 1
            if seen == count:
                return out
    raise AssertionError(f"the stream ended before {count} {kind!r} event(s): {out}")


def redis_available() -> bool:
    """True when Debian's redis-server is installed."""
    return shutil.which("redis-server") is not None


class RedisServer:
    """redis-server on a free loopback port, no persistence; stopped on exit."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._dir = tempfile.TemporaryDirectory(prefix="ffn-lab-redis-")
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install -y redis-server)")
        self._proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self._dir.name],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                if self._proc.poll() is not None:
                    raise RuntimeError("redis-server exited") from None
                time.sleep(0.05)
        self.__exit__()
        raise RuntimeError("redis-server did not answer")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
            self._proc = None
        self._dir.cleanup()


class Relay:
    """A TCP relay 127.0.0.1:port -> target port; `cut()` closes every open connection
    (a dropped Wi-Fi), new ones go through again."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Close every connection open now."""
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        """Stop relaying."""
        self._closed = True
        self.cut()
        self._listener.close()
