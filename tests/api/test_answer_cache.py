"""Repeated requests are answered from memory (app/api/middleware/answer_cache.py).

The cache is only correct if every cached endpoint is a pure function of its body: each one
is asked the same body by two separate apps with the cache off, and the answers must be
byte-identical; the cached answer must be those same bytes. Identical requests that arrive
together are computed once; refusals are never stored; the memory bound holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.api.middleware.answer_cache import CACHED_PATHS, AnswerCacheMiddleware
from app.api.routes import forward as routes_forward
from app.config import Settings
from app.lab.forward import forward_answer
from app.main import create_app
from app.model.pretrained import is_available
from tests.serverproc import run_async

S = {"d_model": 16, "d_ff": 64, "num_tokens": 5, "seed": 2, "input_seed": 3}

BODIES: dict[str, dict[str, Any]] = {
    "/api/forward": S,
    "/api/perturb": {**S, "position": 1, "scale": 2.0},
    "/api/dropout": {**S, "dropout": 0.3, "dropout_seed": 4},
    "/api/block": {**S, "norm": "pre"},
    "/api/attention-vs-ffn": {**S, "position": 0, "scale": 1.0, "num_heads": 2},
    "/api/variants": S,
    "/api/misconceptions": {**S, "position": 0},
    "/api/conv1d-check": S,
    "/api/budget": {**S, "num_heads": 2},
    "/api/stack": {**S, "attention": True},
    "/api/cheaper": S,
    "/api/tokenize": {"model": "minilm-l6", "text": "Unbelievably!"},
}
PRETRAINED = {"/api/tokenize"}


def _app(cache_bytes: int) -> TestClient:
    return TestClient(create_app(Settings(answer_cache_bytes=cache_bytes)))


@pytest.fixture
def cached() -> Iterator[TestClient]:
    with _app(64 * 1024 * 1024) as c:
        yield c


@pytest.fixture
def forward_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per computation of /api/forward's answer (the route's `forward_answer`)."""
    calls: list[int] = []
    real = forward_answer

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(routes_forward, "forward_answer", counted)
    return calls


def test_every_cached_endpoint_has_a_case() -> None:
    assert set(BODIES) == CACHED_PATHS


@pytest.mark.parametrize("path", sorted(CACHED_PATHS))
def test_a_repeat_is_the_computed_answer_byte_for_byte(cached: TestClient, path: str) -> None:
    if path in PRETRAINED and not is_available():
        pytest.skip("the pretrained weights package is not installed")
    body = BODIES[path]
    with _app(0) as off_a, _app(0) as off_b:
        computed_a = off_a.post(path, json=body)
        computed_b = off_b.post(path, json=body)
    assert computed_a.status_code == 200, computed_a.text[:300]
    assert "x-ffn-lab-cache" not in computed_a.headers  # the cache is off
    assert computed_a.content == computed_b.content, f"{path} is not a function of its body"

    first = cached.post(path, json=body)
    again = cached.post(path, json=body)
    assert first.headers["x-ffn-lab-cache"] == "miss"
    assert again.headers["x-ffn-lab-cache"] == "hit"
    assert first.content == again.content == computed_a.content
    assert "server-timing" not in again.headers  # nothing was timed
    assert again.headers["content-security-policy"]  # the outer middleware still runs
    if "input_seed" in body:  # another body is another key
        other = cached.post(path, json={**body, "input_seed": 9})
        assert other.headers["x-ffn-lab-cache"] == "miss"


def test_no_cache_in_the_request_computes_again(
    cached: TestClient, forward_calls: list[int]
) -> None:
    first = cached.post("/api/forward", json=S)
    fresh = cached.post("/api/forward", json=S, headers={"cache-control": "no-cache"})
    again = cached.post("/api/forward", json=S)
    assert [first.headers["x-ffn-lab-cache"], fresh.headers["x-ffn-lab-cache"]] == ["miss"] * 2
    assert "server-timing" in fresh.headers
    assert again.headers["x-ffn-lab-cache"] == "hit"
    assert first.content == fresh.content == again.content
    assert len(forward_calls) == 2


def test_refusals_are_not_stored(cached: TestClient) -> None:
    bad = {**S, "d_model": 0}
    for _ in range(2):
        r = cached.post("/api/forward", json=bad)
        assert r.status_code == 422
        assert "x-ffn-lab-cache" not in r.headers


def test_not_cached_paths_are_computed_each_time(cached: TestClient) -> None:
    for _ in range(2):
        r = cached.post("/api/snapshot", json={**S, "position": 0})
        assert r.status_code == 200
        assert "x-ffn-lab-cache" not in r.headers


def test_identical_requests_together_are_computed_once(forward_calls: list[int]) -> None:
    app = create_app(Settings(answer_cache_bytes=64 * 1024 * 1024, inline_max_flops=0))
    body = {**S, "d_model": 256, "d_ff": 1024, "num_tokens": 32}

    async def burst() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://lab") as client,
        ):
            return list(
                await asyncio.gather(*(client.post("/api/forward", json=body) for _ in range(8)))
            )

    answers = run_async(burst())
    assert all(r.status_code == 200 for r in answers)
    assert len({r.content for r in answers}) == 1
    assert len(forward_calls) == 1, f"{len(forward_calls)} computations for 8 identical requests"
    assert sorted(r.headers["x-ffn-lab-cache"] for r in answers) == ["hit"] * 7 + ["miss"]


def test_the_memory_bound_holds() -> None:
    sizes: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": b"[" + b"1," * 499 + b"1]"})

    cache = AnswerCacheMiddleware(app, max_bytes=10_000)

    async def run() -> None:
        for seed in range(100):
            body = f'{{"seed": {seed}}}'.encode()
            message = {"type": "http.request", "body": body, "more_body": False}

            async def receive(message: Any = message) -> Any:
                return message

            async def send(message: Any) -> None:
                pass

            await cache({"type": "http", "method": "POST", "path": "/api/forward"}, receive, send)
            sizes.append(cache.current_bytes)

    run_async(run())
    assert max(sizes) <= 10_000
    assert cache.misses == 100 and cache.hits == 0
    assert sizes[-1] > 9_000  # it is filled, not emptied
