"""Bounded pools by cost class and the time budget (app.services.compute), and their HTTP
answers (app.api.compute). Every test waits for events and states, never for time."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import anyio.to_thread
import orjson
import pytest

from app.api.compute import not_run_response
from app.config import Settings
from app.model.ffn import FFNConfig
from app.services.compute import ComputePools, Cost, NotRun, checkpoint, estimate_cost

HEAVY = estimate_cost(FFNConfig(4096, 11008, "swiglu", bias=False), 8, Settings())
LIGHT = estimate_cost(FFNConfig(64, 256, "relu"), 8, Settings())


@pytest.mark.parametrize(
    ("d_model", "d_ff", "activation", "tokens", "expected"),
    [
        pytest.param(64, 256, "relu", 8, "light", id="S-64-256"),
        pytest.param(512, 2048, "relu", 8, "light", id="transformer-base-T8"),
        pytest.param(768, 3072, "gelu", 64, "heavy", id="bert-base-T64"),
        pytest.param(1024, 4096, "relu", 32, "heavy", id="L-1024-4096"),
        pytest.param(4096, 11008, "swiglu", 1, "heavy", id="llama-7b-T1"),
    ],
)
def test_cost_class_from_params_and_flops(
    d_model: int, d_ff: int, activation: str, tokens: int, expected: str
) -> None:
    cost = estimate_cost(FFNConfig(d_model, d_ff, activation), tokens, Settings())
    assert cost.cost_class == expected
    assert cost.params >= d_model * d_ff * 2
    assert cost.flops >= 2 * 2 * tokens * d_model * d_ff


def _held(
    name: str, log: list[str], started: threading.Event, release: threading.Event
) -> Callable[[], str]:
    """Work that says it started, waits for `release` (checking its checkpoint), logs."""

    def work() -> str:
        started.set()
        while not release.wait(0.01):
            checkpoint()
        checkpoint()
        log.append(name)
        return name

    return work


def test_heavy_requests_cannot_starve_light_ones() -> None:
    """With every heavy thread held, light requests still run to the end."""
    pools = ComputePools(Settings(heavy_workers=1, light_workers=2, request_timeout_s=60))
    log: list[str] = []
    heavy_started, release = threading.Event(), threading.Event()
    outcomes: list[object] = []

    async def heavy(i: int) -> None:
        outcomes.append(await pools.run(_held(f"heavy{i}", log, heavy_started, release), HEAVY))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(heavy, i)
            await anyio.to_thread.run_sync(heavy_started.wait)  # heavy0 holds the heavy pool
            for i in range(4):
                done = threading.Event()
                done.set()
                outcomes.append(await pools.run(_held(f"light{i}", log, done, done), LIGHT))
            assert log == [f"light{i}" for i in range(4)]  # no heavy work has finished
            assert pools.limiters["heavy"].statistics().tasks_waiting == 2
            release.set()

    anyio.run(main)
    assert log[:4] == [f"light{i}" for i in range(4)]
    assert sorted(log[4:]) == [f"heavy{i}" for i in range(3)]
    assert not any(isinstance(o, NotRun) for o in outcomes)


def test_over_budget_gives_timed_out_without_waiting_and_stops_the_work() -> None:
    """The caller gets `timed_out` while the work is still held; released, the abandoned
    work stops at its next checkpoint instead of finishing."""
    pools = ComputePools(Settings(request_timeout_s=0.2))
    log: list[str] = []
    started, release = threading.Event(), threading.Event()
    stopped = threading.Event()
    work = _held("slow", log, started, release)

    def watched() -> str:
        try:
            return work()
        finally:
            stopped.set()

    outcome = anyio.run(pools.run, watched, LIGHT)
    assert isinstance(outcome, NotRun) and outcome.reason == "timed_out"
    assert not release.is_set() and started.is_set()  # answered while the work was held
    release.set()
    assert stopped.wait(60)
    assert log == []  # stopped at its checkpoint, never finished
    assert pools.stats()["timed_out"] == 1 and pools.stats()["finished"] == 0


def test_a_queued_request_times_out_in_the_queue() -> None:
    """Queueing counts against the budget: while the only heavy thread is taken, queued
    requests time out without their work ever starting."""
    pools = ComputePools(Settings(heavy_workers=1, request_timeout_s=0.5))
    started = threading.Event()
    outcomes: list[object] = []

    async def one() -> None:
        outcomes.append(await pools.run(_held("queued", [], started, started), HEAVY))

    async def main() -> None:
        async with pools.limiters["heavy"], anyio.create_task_group() as tg:
            tg.start_soon(one)  # the heavy thread is busy for the whole test
            tg.start_soon(one)

    anyio.run(main)
    assert [o.reason for o in outcomes if isinstance(o, NotRun)] == ["timed_out"] * 2
    assert not started.is_set()  # their work never started
    assert pools.stats()["started"] == 0 and pools.stats()["timed_out"] == 2


def _waiting(pools: ComputePools) -> int:
    return int(pools.limiters["heavy"].statistics().tasks_waiting)


def test_a_superseded_request_is_dropped_before_it_starts() -> None:
    """Two queued requests with one supersede key: only the newest one is computed."""
    pools = ComputePools(Settings(heavy_workers=1, request_timeout_s=60))
    log: list[str] = []
    done = threading.Event()
    done.set()
    outcomes: dict[str, object] = {}

    async def one(name: str) -> None:
        work = _held(name, log, done, done)
        outcomes[name] = await pools.run(work, HEAVY, supersede_key="panel/1")

    async def main() -> None:
        # the task group outlives the held heavy thread, so the queued ones run after it
        async with anyio.create_task_group() as tg, pools.limiters["heavy"]:
            tg.start_soon(one, "older")
            while _waiting(pools) < 1:  # wait for the state: "older" is queued
                await anyio.sleep(0.01)
            tg.start_soon(one, "newest")
            while _waiting(pools) < 2:
                await anyio.sleep(0.01)

    anyio.run(main)
    older = outcomes["older"]
    assert isinstance(older, NotRun) and older.reason == "superseded" and older.key == "panel/1"
    assert outcomes["newest"] == "newest" and log == ["newest"]
    assert pools.stats()["dropped_superseded"] == 1 and pools.stats()["finished"] == 1


def test_a_running_request_stops_at_its_checkpoint_when_superseded() -> None:
    pools = ComputePools(Settings(heavy_workers=2, request_timeout_s=60))
    log: list[str] = []
    started, never = threading.Event(), threading.Event()
    done = threading.Event()
    done.set()
    outcomes: dict[str, object] = {}

    async def one(name: str, work: Callable[[], str]) -> None:
        outcomes[name] = await pools.run(work, HEAVY, supersede_key="panel/1")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "running", _held("running", log, started, never))
            await anyio.to_thread.run_sync(started.wait)
            tg.start_soon(one, "newest", _held("newest", log, done, done))

    anyio.run(main)
    running = outcomes["running"]
    assert isinstance(running, NotRun) and running.reason == "superseded"
    assert outcomes["newest"] == "newest" and log == ["newest"]
    assert pools.stats()["stopped_superseded"] == 1


def test_a_disconnected_client_is_dropped_before_its_work_starts() -> None:
    pools = ComputePools(Settings(request_timeout_s=60))
    ran: list[str] = []

    async def gone() -> bool:
        return True

    outcome = anyio.run(pools.run, lambda: ran.append("x"), LIGHT, None, gone)
    assert isinstance(outcome, NotRun) and outcome.reason == "disconnected"
    assert ran == [] and pools.stats()["dropped_disconnected"] == 1


@pytest.mark.parametrize(
    ("outcome", "status", "words"),
    [
        pytest.param(NotRun("superseded", LIGHT, 5.0, "p/1"), 409, "superseded", id="409"),
        pytest.param(NotRun("disconnected", LIGHT, 5.0), 499, "client disconnected", id="499"),
        pytest.param(NotRun("timed_out", HEAVY, 8.0), 503, "budget of 8 s", id="503"),
    ],
)
def test_work_without_an_answer_gets_its_http_answer(
    outcome: NotRun, status: int, words: str
) -> None:
    response = not_run_response(outcome)
    assert response.status_code == status
    detail = orjson.loads(bytes(response.body))["detail"]
    assert words in detail and "request_timeout_s" not in detail
    if status == 503:
        assert response.headers["retry-after"] == "2"
        assert f"{HEAVY.params:,} parameters" in detail


def test_cost_is_a_plain_value() -> None:
    assert Cost(1, 2, "light") == Cost(1, 2, "light")
