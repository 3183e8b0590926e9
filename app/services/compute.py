"""Where FFN work runs: two bounded thread pools by cost class, and a time budget.

A request's cost is estimated from its configuration before anything is allocated
(parameters of the FFN, FLOPs of one forward pass). Light requests (the page's usual
sizes) and heavy ones (BERT/LLaMA-sized FFNs) wait for separate `anyio.CapacityLimiter`s,
so a few heavy requests can never take every thread and starve the light ones. Each
request gets `Settings.request_timeout_s`, queueing included; past it the client gets a
503 JSON answer at once (never a hung connection) and the abandoned work stops at its next
checkpoint (`checkpoint()` between the stages of a run).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import anyio
import anyio.from_thread
import anyio.to_thread
import torch
from fastapi import Response

from app.analysis import flop_count, param_counts
from app.api.encoding import json_response
from app.config import Settings
from app.model.ffn import FFNConfig

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
    """The 503 message: what took too long, the budget and the setting."""
    return (
        f"the server is busy: this {cost.cost_class} request ({cost.params:,} parameters, "
        f"{cost.flops:,} FLOPs) did not finish within its budget of {budget:g} s "
        "(setting request_timeout_s). Try again in a moment, or use a smaller configuration."
    )


def checkpoint() -> None:
    """Call between the stages of a run in a worker thread: stops work that timed out.

    Raises `anyio`'s cancellation exception when the request's budget has passed; does
    nothing outside a worker thread started by `ComputePools.run`.
    """
    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:  # not in an anyio worker thread (direct calls, tests)
        return


_local = threading.local()


def apply_torch_threads(count: int) -> None:
    """Give this thread `count` torch intra-op threads (0: leave torch's default), once.

    torch's thread count is per OS thread: setting it in one thread leaves the others at
    the default, and a matmul split over 1 or 2 threads rounds differently.
    """
    if count and getattr(_local, "torch_threads", None) != count:
        torch.set_num_threads(count)
        _local.torch_threads = count


class ComputePools:
    """One `CapacityLimiter` per cost class plus the time budget (made in the lifespan)."""

    def __init__(self, settings: Settings) -> None:
        self.budget = settings.request_timeout_s
        self.torch_threads = settings.torch_threads
        self.limiters: dict[CostClass, anyio.CapacityLimiter] = {
            "light": anyio.CapacityLimiter(settings.light_workers),
            "heavy": anyio.CapacityLimiter(settings.heavy_workers),
        }

    async def run(self, work: Callable[[], Response], cost: Cost) -> Response:
        """`work()` in the pool of `cost.cost_class` within the budget, else a 503 answer."""

        def in_thread() -> Response:
            apply_torch_threads(self.torch_threads)
            return work()

        try:
            with anyio.fail_after(self.budget):
                return await anyio.to_thread.run_sync(
                    in_thread, limiter=self.limiters[cost.cost_class], abandon_on_cancel=True
                )
        except TimeoutError:
            response = json_response({"detail": timeout_message(self.budget, cost)}, 503)
            response.headers["retry-after"] = str(max(1, round(self.budget / 4)))
            return response
