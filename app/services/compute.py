"""Where FFN work runs: two bounded thread pools by cost class, and a time budget.

A request's cost is estimated from its configuration before anything is allocated
(parameters of the FFN, FLOPs of one forward pass). Light requests (the page's usual
sizes) and heavy ones (BERT/LLaMA-sized FFNs) wait for separate `anyio.CapacityLimiter`s,
so a few heavy requests can never take every thread and starve the light ones. Each
request gets `Settings.request_timeout_s`, queueing included; past it the client gets a
503 JSON answer at once (never a hung connection) and the abandoned work stops at its next
checkpoint (`checkpoint()` between the stages of a run).

Work nobody waits for is dropped before it starts: when a request's turn in its
pool comes, it is not run if its client has disconnected, or if a newer request carrying
the same supersede key has arrived since. The key is the optional request header
`X-FFN-Lab-Supersede: <panel id>/<session>` (any string up to 200 characters): the page
sends one per panel and session, so a slider step that supersedes the previous step's
request of that panel cancels it while it is still queued, and stops it at its next
`checkpoint()` if it is already running. A superseded request is answered 409 with
`{"detail": ...}` (its client has usually gone already). Counters of what was started,
finished and dropped are in `GET /api/health` (`compute`), for tests and operators.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from cachetools import LRUCache
from fastapi import Request, Response

from app.analysis import flop_count, param_counts
from app.api.encoding import json_response
from app.config import Settings
from app.model.ffn import FFNConfig
from app.services.checkpoint import Superseded, apply_torch_threads, checkpoint, running

__all__ = [
    "ComputePools",
    "Cost",
    "Superseded",
    "apply_torch_threads",
    "checkpoint",
    "estimate_cost",
    "run_request",
    "supersede_key",
]

CostClass = Literal["light", "heavy"]


@dataclass(frozen=True)
class Cost:
    """The estimated cost of one request: FFN parameters, FLOPs, and the class it falls in."""

    params: int
    flops: int
    cost_class: CostClass


def estimate_cost(config: FFNConfig, num_tokens: int, settings: Settings, passes: int = 1) -> Cost:
    """Cost of `passes` forward passes of `num_tokens` tokens (perturb runs two).

    Heavy when the parameters exceed `heavy_min_params` (building seeded weights is the
    expensive part) or the FLOPs exceed `heavy_min_flops`.
    """
    params = param_counts(config)["total"]
    flops = passes * flop_count(config, num_tokens).total
    heavy = params > settings.heavy_min_params or flops > settings.heavy_min_flops
    return Cost(params=params, flops=flops, cost_class="heavy" if heavy else "light")


def timeout_message(budget: float, cost: Cost) -> str:
    """The 503 message: what took too long and the time budget (no setting names)."""
    return (
        f"the server is busy: this {cost.cost_class} request ({cost.params:,} parameters, "
        f"{cost.flops:,} FLOPs) did not finish within its budget of {budget:g} s. "
        "Try again in a moment, or use a smaller configuration."
    )


SUPERSEDE_HEADER = "x-ffn-lab-supersede"
"""Request header: requests with equal values supersede each other, newest wins."""
SUPERSEDE_MAX_CHARS = 200


def superseded_message(key: str) -> str:
    """The 409 message of a request that a newer one with the same key replaced."""
    return (
        f"superseded: a newer request with the same {SUPERSEDE_HEADER} ({key!r}) arrived, "
        "so this one was not computed (or was stopped). Only the newest answer is sent."
    )


class _Job:
    """One request's place in its supersede sequence (key None: never superseded)."""

    def __init__(self, pools: ComputePools, key: str | None) -> None:
        self.pools = pools
        self.key = key
        self.generation = pools.supersede_arrival(key)

    def stale(self) -> bool:
        return self.key is not None and self.pools.latest(self.key) != self.generation


class ComputePools:
    """One `CapacityLimiter` per cost class plus the time budget (made in the lifespan),
    the supersede sequence per key, and counters (see `stats`)."""

    def __init__(self, settings: Settings) -> None:
        self.budget = settings.request_timeout_s
        self.torch_threads = settings.torch_threads
        self.limiters: dict[CostClass, anyio.CapacityLimiter] = {
            "light": anyio.CapacityLimiter(settings.light_workers),
            "heavy": anyio.CapacityLimiter(settings.heavy_workers),
        }
        self._lock = threading.Lock()
        self._latest: LRUCache[str, int] = LRUCache(maxsize=10_000)
        self._running: list[_Job] = []
        self.counts = {
            "started": 0,
            "finished": 0,
            "dropped_disconnected": 0,
            "dropped_superseded": 0,
            "stopped_superseded": 0,
            "timed_out": 0,
            "max_stale_running": 0,
        }

    def supersede_arrival(self, key: str | None) -> int:
        """A new request with `key` arrived: its generation (older ones become stale)."""
        if key is None:
            return 0
        with self._lock:
            generation = self._latest.get(key, 0) + 1
            self._latest[key] = generation
            self._note_stale()
            return generation

    def latest(self, key: str) -> int:
        with self._lock:
            return self._latest.get(key, 0)

    def _note_stale(self) -> None:
        """Record how many running computations are stale now (lock held)."""
        stale = sum(
            1
            for job in self._running
            if job.key is not None and self._latest.get(job.key, 0) != job.generation
        )
        self.counts["max_stale_running"] = max(self.counts["max_stale_running"], stale)

    def stats(self) -> dict[str, int]:
        """Counters since start: started, finished, dropped before starting (client gone,
        superseded), stopped at a checkpoint (superseded), timed out; `running` now, and
        `max_stale_running`, the most computations seen running at once whose answer
        nobody waited for any more (superseded)."""
        with self._lock:
            return {**self.counts, "running": len(self._running)}

    def _count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    async def run(
        self,
        work: Callable[[], Response],
        cost: Cost,
        supersede_key: str | None = None,
        disconnected: Callable[[], Awaitable[bool]] | None = None,
    ) -> Response:
        """`work()` in the pool of `cost.cost_class` within the budget, else a 503 answer.

        When its turn comes, the work is not started if `disconnected()` says the client
        is gone (answered 499, nginx's "client closed request", which nobody reads) or if
        a newer request with the same `supersede_key` arrived (409)."""
        job = _Job(self, supersede_key)

        def in_thread() -> Response:
            apply_torch_threads(self.torch_threads)
            with running(job):
                return work()

        limiter = self.limiters[cost.cost_class]
        try:
            with anyio.fail_after(self.budget):
                async with limiter:
                    if job.stale():
                        self._count("dropped_superseded")
                        return _superseded(job.key)
                    if disconnected is not None and await disconnected():
                        self._count("dropped_disconnected")
                        return json_response({"detail": "client disconnected"}, 499)
                    with self._lock:
                        self.counts["started"] += 1
                        self._running.append(job)
                    try:
                        response = await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
                    except Superseded:
                        self._count("stopped_superseded")
                        return _superseded(job.key)
                    finally:
                        with self._lock:
                            self._running.remove(job)
                    self._count("finished")
                    return response
        except TimeoutError:
            self._count("timed_out")
            response = json_response({"detail": timeout_message(self.budget, cost)}, 503)
            response.headers["retry-after"] = str(max(1, round(self.budget / 4)))
            return response


def _superseded(key: str | None) -> Response:
    return json_response({"detail": superseded_message(key or "")}, 409)


def supersede_key(headers: Any) -> str | None:
    """The request's supersede key (header `X-FFN-Lab-Supersede`), or None; at most
    `SUPERSEDE_MAX_CHARS` characters are used."""
    value = headers.get(SUPERSEDE_HEADER)
    if not value:
        return None
    return str(value)[:SUPERSEDE_MAX_CHARS]


async def run_request(
    request: Request, work: Callable[[], Response], cost: Cost, inline: bool = False
) -> Response:
    """Run one request's work: inline on the event loop when `inline` (tiny work), else in
    the app's pools with the request's supersede key and disconnect check."""
    if inline:
        return work()
    pools: ComputePools = request.app.state.compute_pools
    return await pools.run(work, cost, supersede_key(request.headers), request.is_disconnected)
