"""The real server (uvicorn, one worker) on a free loopback port, as a context manager."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

import psutil

from benchmarks.client import LoadResult, load
from tests.serverproc import start_server, stop_server

COMPUTED = {"FFN_LAB_ANSWER_CACHE_BYTES": "0"}
FRESH = {"cache-control": "no-cache"}
"""Request headers that have a request computed even by a server that keeps answers."""
"""The benchmarks time computations: their servers keep no answers to repeated requests
(app/api/middleware/answer_cache.py), except where a row says it measures that cache."""


class Server:
    """`python -m uvicorn app.main:create_app --factory` in a subprocess (see
    `tests.serverproc.start_server`) with `COMPUTED` under `env` unless `keep_answers`,
    terminated on exit whatever happens in between."""

    def __init__(self, env: dict[str, str] | None = None, keep_answers: bool = False) -> None:
        """`keep_answers`: run as shipped, keeping answers to repeated requests (its clients
        then send `FRESH` to have each request computed, and memory holds those answers)."""
        self.env = {**({} if keep_answers else COMPUTED), **(env or {})}
        self.base = ""
        self.proc = None

    def __enter__(self) -> Server:
        self.proc, self.base = start_server(self.env)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Terminate the server process."""
        if self.proc is not None and self.proc.poll() is None:
            stop_server(self.proc)

    def rss(self) -> int:
        """Resident set size of the server process in bytes."""
        if self.proc is None:
            raise RuntimeError("server is not running")
        return int(psutil.Process(self.proc.pid).memory_info().rss)


def forward_churn(
    server: Server, bodies: list[dict[str, Any]], seconds: float, peak: list[int]
) -> LoadResult:
    """POST `bodies` to /api/forward over 2 connections (stopping after `seconds`) while
    the server's RSS in bytes is appended to `peak` every 50 ms (for the peak RSS); the
    load's result. `benchmarks.run`'s RSS row and `benchmarks.bench_memory` both use it."""
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            try:
                peak.append(server.rss())
            except Exception:  # the process may be gone at the very end
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        return load(
            server.base,
            "/api/forward",
            body=lambda i: bodies[i],
            concurrency=2,
            count=len(bodies),
            seconds=seconds,
            timeout=120,
        )
    finally:
        stop.set()
        sampler.join()
