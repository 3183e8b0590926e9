"""Where FFN work runs: two bounded thread pools by cost class, and a time budget.

A request's cost is estimated from its configuration before anything is allocated
(parameters of the FFN, FLOPs of one forward pass). Light requests (the page's usual
sizes) and heavy ones (BERT/LLaMA-sized FFNs) wait for separate `anyio.CapacityLimiter`s,
so a few heavy requests can never take every thread and starve the light ones. Each
request gets `Settings.request_timeout_s`, queueing included; past it the caller gets a
`NotRun("timed_out")` at once (the API answers 503: never a hung connection) and the
abandoned work stops at its next checkpoint (`checkpoint()` between the stages of a run).

Work nobody waits for is dropped before it starts: when a request's turn in its
pool comes, it is not run if its client has disconnected, or if a newer request carrying
the same supersede key has arrived since. The key is the optional request header
`X-FFN-Lab-Supersede: <panel id>/<session>` (any string up to 200 characters): the page
sends one per panel and session, so a slider step that supersedes the previous step's
request of that panel cancels it while it is still queued, and stops it at its next
`checkpoint()` if it is already running. A superseded request gets `NotRun("superseded")`
(the API answers 409; its client has usually gone already). No HTTP here: the answers to
`NotRun` are built in `app.api.compute`. Counters of what was started,
finished and dropped are in `GET /api/health` (`compute`), for tests and operators.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from cachetools import LRUCache

from app.analysis import flop_count, param_counts
from app.config import Settings
from app.model.ffn import FFNConfig
from app.services.checkpoint import Superseded, apply_torch_threads, checkpoint, running

__all__ = [
    "ComputePools",
    "Cost",
    "NotRun",
    "Superseded",
    "apply_torch_threads",
    "checkpoint",
    "estimate_cost",
]

CostClass = Literal["light", "heavy"]
T = TypeVar("T")


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


@dataclass(frozen=True)
class NotRun:
    """Why a request's work gave no answer.

    Attributes:
        reason: "superseded" (a newer request with the same key arrived), "disconnected"
            (its client is gone) or "timed_out" (over the time budget, queueing included).
        key: the supersede key of a superseded request.
        budget: the time budget in seconds.
        cost: the request's estimated cost.
    """

    reason: Literal["superseded", "disconnected", "timed_out"]
    cost: Cost
    budget: float
    key: str | None = None


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
        work: Callable[[], T],
        cost: Cost,
        supersede_key: str | None = None,
        disconnected: Callable[[], Awaitable[bool]] | None = None,
    ) -> T | NotRun:
        """`work()` in the pool of `cost.cost_class` within the budget, else
        `NotRun("timed_out")`.

        When its turn comes, the work is not started if `disconnected()` says the client
        is gone (`NotRun("disconnected")`) or if a newer request with the same
        `supersede_key` arrived (`NotRun("superseded")`); a running one that a newer
        request supersedes stops at its next `checkpoint()` (`NotRun("superseded")` too)."""
        job = _Job(self, supersede_key)

        def in_thread() -> T:
            apply_torch_threads(self.torch_threads)
            with running(job):
                return work()

        limiter = self.limiters[cost.cost_class]
        try:
            with anyio.fail_after(self.budget):
                async with limiter:
                    if job.stale():
                        self._count("dropped_superseded")
                        return NotRun("superseded", cost, self.budget, job.key)
                    if disconnected is not None and await disconnected():
                        self._count("dropped_disconnected")
                        return NotRun("disconnected", cost, self.budget)
                    with self._lock:
                        self.counts["started"] += 1
                        self._running.append(job)
                    try:
                        response = await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
                    except Superseded:
                        self._count("stopped_superseded")
                        return NotRun("superseded", cost, self.budget, job.key)
                    finally:
                        with self._lock:
                            self._running.remove(job)
                    self._count("finished")
                    return response
        except TimeoutError:
            self._count("timed_out")
            return NotRun("timed_out", cost, self.budget)
