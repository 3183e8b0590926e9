"""POST /api/train and /api/train/capacity: training streamed as NDJSON; GET /api/train/status.

The training itself is `app.lab.learning.train` (a generator). Here: each chunk of steps (one
progress line) runs in a worker thread, so the event loop never blocks; between chunks the
stream checks whether the client is still there. Closing the connection stops the work
before the next chunk (Starlette also cancels a stream whose client went away, and the
generator is closed either way). Bounds come from `app.config.Settings`: steps, pairs,
parameters and work are refused with a 422 before anything runs; a run that passes
`max_train_seconds` stops and its final line says "stopped": "time_limit"; more than
`max_concurrent_trainings` streams at once get a 503 (after a short wait for a slot).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import orjson
import torch
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from app.api.encoding import json_response
from app.api.json_body import FastJsonRoute
from app.api.middleware.errors import INTERNAL_ERROR
from app.api.schemas.responses import ErrorOut
from app.api.schemas.train import CapacityRequest, TrainRequest
from app.config import get_settings
from app.lab.learning.capacity import CapacityPoint, capacity_sweep
from app.lab.learning.memory import TrainConfig
from app.lab.learning.train import Final, Progress, train
from app.services import shutdown

router = APIRouter(prefix="/api", tags=["learning"], route_class=FastJsonRoute)
logger = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY
_END = object()
_END_OF_SWEEP = object()
SHUTDOWN_LINE = orjson.dumps({"done": False, "reason": "server shutting down"}) + b"\n"
"""The last line of a training stream the server ends because it is stopping."""

ERRORS: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "NDJSON: one JSON object per line (see the endpoint's description)",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    },
    503: {"model": ErrorOut, "description": "busy: too many trainings at once"},
}


@dataclass
class TrainStats:
    """Server-wide counters of training work (read by GET /api/train/status)."""

    running: int = 0
    started: int = 0
    completed: int = 0
    cancelled: int = 0
    steps_run: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self) -> None:
        """One optimiser step was taken (called from the worker thread).

        Raises:
            ShuttingDown: the server was asked to stop (SIGTERM): the training ends now.
        """
        with self.lock:
            self.steps_run += 1
        shutdown.check()

    def snapshot(self) -> dict[str, int]:
        """The counters as a dict."""
        with self.lock:
            return {
                "running": self.running,
                "started": self.started,
                "completed": self.completed,
                "cancelled": self.cancelled,
                "steps_run": self.steps_run,
            }


def _stats(request: Request) -> TrainStats:
    state = request.app.state
    stats: TrainStats | None = getattr(state, "train_stats", None)
    if stats is None:
        stats = TrainStats()
        state.train_stats = stats
    return stats


def _progress(p: Progress) -> dict[str, Any]:
    return {"step": p.step, "loss": p.loss, "accuracy": p.accuracy, "dead_units": p.dead_units}


def _config(config: TrainConfig) -> dict[str, Any]:
    return {
        "task": config.task,
        "d_model": config.d_model,
        "d_ff": config.d_ff if config.ffn or config.same_budget else None,
        "activation": config.activation,
        "num_pairs": config.num_pairs,
        "num_classes": config.num_classes,
        "steps": config.steps,
        "lr": config.lr,
        "seed": config.seed,
        "ffn": config.ffn,
        "same_budget": config.same_budget,
        "log_every": config.log_every,
    }


def _final(final: Final, config: TrainConfig, include_weights: bool) -> dict[str, Any]:
    reading = None if final.reading is None else dict(vars(final.reading))
    extra = {"keys": final.keys, "weights": final.weights} if include_weights else {}
    return {
        "done": True,
        "final": {
            **_progress(final.progress),
            "stopped": final.stopped,
            "seconds": final.seconds,
            "memorised": final.memorised,
            "num_pairs": final.num_pairs,
            "params": final.params,
            "dead_unit_indices": final.dead_unit_indices,
            "rule": final.rule,
            "threshold": 0.0 if final.rule == "exact_zero" else config.threshold,
            "targets": final.targets,
            "reading": reading,
            "config": _config(config),
            **extra,
        },
    }


def _next(records: Generator[Any, None, None], threads: int) -> Any:
    """The next record, computed on `threads` torch threads; this worker thread's own
    count is restored afterwards, so other requests it runs keep theirs (and their
    rounding)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return next(records, _END)
    finally:
        torch.set_num_threads(before)


async def _ndjson(
    request: Request,
    records: Generator[Any, None, None],
    encode: Callable[[Any], dict[str, Any]],
    stats: TrainStats,
) -> AsyncIterator[bytes]:
    """One line per record; stops (and closes `records`) when the client goes away. When the
    server is stopping (SIGTERM), the stream ends at once with `SHUTDOWN_LINE`."""
    threads = get_settings().train_torch_threads
    finished = False
    try:
        while True:
            if await request.is_disconnected():
                break
            try:
                shutdown.check()
                record = await anyio.to_thread.run_sync(_next, records, threads)
                line = None if record is _END else orjson.dumps(encode(record), option=_OPTIONS)
            except shutdown.ShuttingDown:
                yield SHUTDOWN_LINE
                break
            except Exception:  # headers are sent: say so in the stream, log the traceback
                logger.exception("training stream failed")
                yield orjson.dumps({"done": True, "error": INTERNAL_ERROR}) + b"\n"
                break
            if line is None:
                finished = True
                break
            yield line + b"\n"
    finally:
        records.close()
        with stats.lock:
            stats.running -= 1
            if finished:
                stats.completed += 1
            else:
                stats.cancelled += 1


def _busy(limit: int) -> Response:
    response = json_response(
        {
            "detail": f"the server is already training {limit} models at once, the most it "
            "runs together; try again when one has finished"
        },
        503,
    )
    response.headers["retry-after"] = "5"
    return response


SLOT_WAIT_SECONDS = 2.0
"""How long a new training waits for a free slot before the 503: a run the page has just
cancelled (Train pressed again, the lesson's next step) frees its slot only when the server
sees the hang-up, at the end of its current chunk of steps (milliseconds)."""


async def _take_slot(stats: TrainStats, limit: int) -> bool:
    """Count one more running training if fewer than `limit` run, waiting up to
    `SLOT_WAIT_SECONDS` for one to end; False when none did."""
    deadline = anyio.current_time() + SLOT_WAIT_SECONDS
    while True:
        with stats.lock:
            if stats.running < limit:
                stats.running += 1
                stats.started += 1
                return True
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.02)  # the slot frees in the event loop (the stream's finally)


async def _start(
    request: Request,
    records: Generator[Any, None, None],
    encode: Callable[[Any], dict[str, Any]],
    stats: TrainStats,
) -> Response:
    limit = get_settings().max_concurrent_trainings
    if not await _take_slot(stats, limit):
        records.close()
        return _busy(limit)
    return StreamingResponse(
        _ndjson(request, records, encode, stats),
        media_type=NDJSON,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


@router.post("/train", responses=ERRORS, response_class=StreamingResponse)
async def post_train(req: TrainRequest, request: Request) -> Response:
    """Train a small model to memorise random key-value pairs, streamed as NDJSON lines:
    `{"step", "loss", "accuracy", "dead_units"}` every `log_every` steps (and at step 0),
    then `{"done": true, "final": {...}}` with the key-value reading of one unit."""
    stats = _stats(request)
    config = req.config()
    records = train(
        config,
        unit=req.unit,
        max_seconds=get_settings().max_train_seconds,
        on_step=stats.step,
    )

    def encode(record: Any) -> dict[str, Any]:
        if isinstance(record, Final):
            return _final(record, config, req.include_weights)
        return _progress(record)

    return await _start(request, records, encode, stats)


def _point(point: CapacityPoint) -> dict[str, Any]:
    return dict(vars(point))


@router.post("/train/capacity", responses=ERRORS, response_class=StreamingResponse)
async def post_capacity(req: CapacityRequest, request: Request) -> Response:
    """Memorised fraction against d_ff for the same pairs, streamed as NDJSON: one
    `{"point": {...}}` line per trained model (the no-FFN model first), then
    `{"done": true, "final": {"points": [...], ...}}`."""
    stats = _stats(request)
    base = req.train_config(d_ff=req.d_ff_values[0], ffn=True)
    points: list[dict[str, Any]] = []

    def sweep() -> Generator[Any, None, None]:
        yield from capacity_sweep(
            base,
            req.d_ff_values,
            include_no_ffn=req.include_no_ffn,
            max_seconds=get_settings().max_train_seconds,
            on_step=stats.step,
        )
        yield _END_OF_SWEEP

    def encode(record: Any) -> dict[str, Any]:
        if record is _END_OF_SWEEP:
            return {
                "done": True,
                "final": {"points": points, "num_pairs": req.num_pairs, "config": _config(base)},
            }
        points.append(_point(record))
        return {"point": points[-1]}

    return await _start(request, sweep(), encode, stats)


class TrainStatusOut(BaseModel):
    """Counters of the server's training work since it started."""

    running: int
    started: int
    completed: int
    cancelled: int
    steps_run: int


@router.get("/train/status", response_model=TrainStatusOut)
async def get_train_status(request: Request) -> Response:
    """How many trainings run now, and how many optimiser steps the server has taken."""
    return json_response(_stats(request).snapshot())
