"""Against a real server process: a quick load run, big uploads, raw-path traversal.

The full run (50 clients, 60 s) is `python -m benchmarks.load`; this one takes seconds.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import httpx
import pytest

from benchmarks.load import run_load
from tests.serverproc import run_async, start_server, stop_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    proc, base = start_server()
    yield base
    stop_server(proc)


def test_quick_load_has_no_unexpected_answers(server: str) -> None:
    report = run_async(run_load(server, clients=10, duration=3.0))
    assert report.unexpected_total == 0, report.unexpected
    assert report.latency_ms["S_forward"]["n"] >= 1  # it ran (a count, not a speed: no timing)
    assert report.by_status.get("200", 0) > 0 and report.by_status.get("422", 0) > 0
    assert not [s for s in report.by_status if s.startswith("5")]


def test_50_mb_upload_gets_a_readable_413(server: str) -> None:
    body = b'{"tokens": [' + b"1.0," * (50 * 1024 * 1024 // 4) + b"1.0]}"
    headers = {"content-type": "application/json"}
    with httpx.Client(base_url=server, timeout=60) as http:
        declared = http.post("/api/forward", content=body, headers=headers)
        assert declared.status_code == 413
        assert "16,777,216 bytes" in declared.json()["detail"]

        def chunks() -> Iterator[bytes]:
            for start in range(0, len(body), 1 << 20):
                yield body[start : start + (1 << 20)]

        chunked = http.post("/api/forward", content=chunks(), headers=headers)
        assert chunked.status_code == 413
        assert "limit is" in chunked.json()["detail"]
        assert http.get("/api/health").status_code == 200  # the server is fine


@pytest.mark.parametrize(
    "path",
    [
        "/static/../app/config.py",
        "/static/../../etc/passwd",
        "/static/%2e%2e/app/config.py",
        "/static/..%2f..%2fpyproject.toml",
        "/../app/config.py",
    ],
)
def test_raw_path_traversal_on_the_real_server(server: str, path: str) -> None:
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    assert status in (400, 404), answer[:200]
    for secret in (b"class Settings", b"root:", b"[project]"):
        assert secret not in answer


def test_same_bytes_under_concurrency(server: str) -> None:
    """20 identical requests at once, next to large ones, all get the same bytes."""
    small = {"d_model": 64, "d_ff": 256, "activation": "silu", "num_tokens": 8}
    large = {"d_model": 1024, "d_ff": 4096, "num_tokens": 16}

    async def main() -> list[bytes]:
        async with httpx.AsyncClient(base_url=server, timeout=60) as http:
            calls = [http.post("/api/forward", json=small) for _ in range(20)]
            calls += [http.post("/api/forward", json=large) for _ in range(2)]
            responses = await asyncio.gather(*calls)
        assert all(r.status_code == 200 for r in responses)
        return [r.content for r in responses[:20]]

    bodies = run_async(main())
    assert len(set(bodies)) == 1
    assert httpx.post(f"{server}/api/forward", json=small).content == bodies[0]


def test_huge_declared_body_is_refused_at_once(server: str) -> None:
    """A 10 GB Content-Length is answered 413 before any body byte arrives (never hangs)."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            f"POST /api/forward HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {10 * 1024**3}\r\n\r\n".encode()
        )
        answer = b""
        while b"}" not in answer:  # headers and the JSON body may come in separate packets
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert b"10,737,418,240 bytes" in answer
    assert b"connection: close" in answer.lower()
