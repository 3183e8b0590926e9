"""Stopping work between its stages, without knowing about HTTP.

`checkpoint()` is what the experiments layer (app.lab) calls between the stages of a run;
the server's compute pools (app.services.compute) mark the worker thread with the job it
runs, so a checkpoint can stop work whose time budget has passed or whose answer a newer
request has superseded. Outside such a thread (notebooks, tests, the checker) it does
nothing. This module imports no web framework, so `from app import lab` loads none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import anyio.from_thread
import torch


class Superseded(Exception):
    """Raised by `checkpoint()` in work whose answer a newer request has superseded."""


class Job(Protocol):
    """What a checkpoint asks of the job its thread runs."""

    key: str | None

    def stale(self) -> bool:
        """True when a newer request with the same key has arrived."""
        ...


_local = threading.local()


def checkpoint() -> None:
    """Call between the stages of a run in a worker thread: stops work that timed out or
    was superseded.

    Raises `anyio`'s cancellation exception when the request's budget has passed, and
    `Superseded` when a newer request with the same supersede key has arrived; does
    nothing outside a worker thread started by `ComputePools.run`.
    """
    job: Job | None = getattr(_local, "job", None)
    if job is not None and job.stale():
        raise Superseded(job.key)
    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:  # not in an anyio worker thread (direct calls, tests)
        return


@contextmanager
def running(job: Job) -> Iterator[None]:
    """Mark this thread as running `job` (what `checkpoint()` consults), then unmark it."""
    _local.job = job
    try:
        yield
    finally:
        _local.job = None


def apply_torch_threads(count: int) -> None:
    """Give this thread `count` torch intra-op threads (0: leave torch's default), once.

    torch's thread count is per OS thread: setting it in one thread leaves the others at
    the default, and a matmul split over 1 or 2 threads rounds differently.
    """
    if count and getattr(_local, "torch_threads", None) != count:
        torch.set_num_threads(count)
        _local.torch_threads = count
