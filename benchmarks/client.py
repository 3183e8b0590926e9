"""A bounded asyncio HTTP client for the benchmarks.

N workers, at most `count` requests or `seconds`, then stop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

JSON = {"content-type": "application/json"}


@dataclass(frozen=True)
class LoadResult:
    """What one load run measured.

    Attributes:
        requests: answered requests (status 200).
        errors: requests that failed or were not 200.
        seconds: wall time of the run.
        latencies: seconds per answered request, as the client saw them.
        body_bytes: largest response body seen.
    """

    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    body_bytes: int

    @property
    def rps(self) -> float:
        """Answered requests per second."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the latencies in seconds."""
        return percentile(self.latencies, q)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated q-th percentile (0-100) of `values`; nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * min(max(q, 0.0), 100.0) / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def _run(
    base: str,
    method: str,
    path: str,
    body: Callable[[int], Any] | Any,
    concurrency: int,
    count: int,
    seconds: float,
    timeout: float,
) -> LoadResult:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    latencies: list[float] = []
    errors = 0
    biggest = 0
    issued = 0
    static = None if callable(body) else (orjson.dumps(body) if body is not None else None)
    # no-cache: every request is computed, even by a server that keeps repeated answers
    fresh = {"cache-control": "no-cache"}
    async with httpx.AsyncClient(
        base_url=base, limits=limits, timeout=timeout, headers=fresh
    ) as client:
        started = time.perf_counter()
        deadline = started + seconds

        async def worker() -> None:
            nonlocal errors, biggest, issued
            while issued < count and time.perf_counter() < deadline:
                index = issued
                issued += 1
                content = orjson.dumps(body(index)) if callable(body) else static
                t0 = time.perf_counter()
                try:
                    if method == "GET":
                        response = await client.get(path)
                    else:
                        response = await client.post(path, content=content, headers=JSON)
                except httpx.HTTPError:
                    errors += 1
                    continue
                elapsed = time.perf_counter() - t0
                if response.status_code == 200:
                    latencies.append(elapsed)
                    biggest = max(biggest, len(response.content))
                else:
                    errors += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return LoadResult(len(latencies), errors, wall, latencies, biggest)


def load(
    base: str,
    path: str,
    *,
    method: str = "POST",
    body: Callable[[int], Any] | Any = None,
    concurrency: int = 1,
    count: int = 100,
    seconds: float = 5.0,
    timeout: float = 60.0,
) -> LoadResult:
    """Send requests to `base + path` from `concurrency` workers until `count` or `seconds`.

    `body` is a JSON value sent with every POST, or a function of the request index that
    returns one. Stops by itself: never more than `count` requests, never much longer than
    `seconds` (plus one request's `timeout`).
    """
    return asyncio.run(_run(base, method, path, body, concurrency, count, seconds, timeout))
