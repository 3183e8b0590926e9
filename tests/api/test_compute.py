"""Bounded pools by cost class and the time budget (app.services.compute)."""

from __future__ import annotations

import threading
import time

import anyio
import pytest
from fastapi import Response

from app.config import Settings
from app.model.ffn import FFNConfig
from app.services.compute import ComputePools, checkpoint, estimate_cost


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


def _sleeper(seconds: float, log: list[str], name: str) -> Response:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)
        checkpoint()
    log.append(name)
    return Response(name)


def test_heavy_requests_cannot_starve_light_ones() -> None:
    pools = ComputePools(Settings(heavy_workers=1, light_workers=2, request_timeout_s=10))
    heavy = estimate_cost(FFNConfig(4096, 11008, "swiglu", bias=False), 8, Settings())
    light = estimate_cost(FFNConfig(64, 256, "relu"), 8, Settings())
    log: list[str] = []
    light_latency: list[float] = []

    async def light_request(i: int) -> None:
        await anyio.sleep(0.05)  # arrive after the heavy ones
        t0 = time.monotonic()
        await pools.run(lambda: _sleeper(0.01, log, f"light{i}"), light)
        light_latency.append(time.monotonic() - t0)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(pools.run, lambda i=i: _sleeper(0.4, log, f"heavy{i}"), heavy)
            for i in range(4):
                tg.start_soon(light_request, i)

    anyio.run(main)
    assert max(light_latency) < 0.3, light_latency  # not behind 3 x 0.4 s of heavy work
    assert log.index("light0") < log.index("heavy0")
    assert sorted(log) == sorted([f"heavy{i}" for i in range(3)] + [f"light{i}" for i in range(4)])


def test_over_budget_answers_503_at_once_and_stops_the_work() -> None:
    pools = ComputePools(Settings(request_timeout_s=0.2))
    cost = estimate_cost(FFNConfig(64, 256, "relu"), 8, Settings())
    log: list[str] = []
    alive_before = threading.active_count()

    async def main() -> Response:
        return await pools.run(lambda: _sleeper(5.0, log, "slow"), cost)

    t0 = time.monotonic()
    response = anyio.run(main)
    elapsed = time.monotonic() - t0
    assert response.status_code == 503
    assert b"budget of 0.2 s" in response.body and b"request_timeout_s" not in response.body
    assert elapsed < 1.0
    time.sleep(0.2)  # the abandoned work stops at its next checkpoint
    assert log == []
    assert threading.active_count() <= alive_before + 1


def test_a_queued_request_also_gets_503_within_its_budget() -> None:
    pools = ComputePools(Settings(heavy_workers=1, request_timeout_s=0.5))
    heavy = estimate_cost(FFNConfig(4096, 11008, "swiglu", bias=False), 8, Settings())
    statuses: list[int] = []

    async def one() -> None:
        response = await pools.run(lambda: _sleeper(0.3, [], "h"), heavy)
        statuses.append(response.status_code)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)

    t0 = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - t0 < 1.5
    assert sorted(statuses) == [200, 503, 503]
