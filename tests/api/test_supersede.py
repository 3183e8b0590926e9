"""Queued work nobody waits for is dropped, over a real server process.

A burst of 10 slider steps at LLaMA-7B size, each request aborted by the client when the
next one is sent (what the page's AbortController does), leaves at most one stale
computation running, and the newest step is answered. Counters come from /api/health.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.serverproc import start_server, stop_server

LLAMA = {
    "d_model": 4096,
    "d_ff": 11008,
    "activation": "swiglu",
    "bias": False,
    "seed": 0,
    "input_seed": 0,
}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    proc, url = start_server()
    try:
        yield url
    finally:
        stop_server(proc)


def _send(base: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> socket.socket:
    """Send one POST on its own connection and return the socket (not read yet)."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    content = json.dumps(body).encode()
    lines = [
        f"POST {path} HTTP/1.1",
        f"host: {host}:{port}",
        "content-type: application/json",
        f"content-length: {len(content)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + content)
    return sock


def _status(sock: socket.socket) -> int:
    """Read the whole answer (the server closes the connection) and return its status."""
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
    sock.close()
    return int(b"".join(chunks).split(b" ", 2)[1])


def _compute(base: str) -> dict[str, int]:
    stats: dict[str, int] = httpx.get(f"{base}/api/health", timeout=30).json()["compute"]
    return stats


def _burst(
    base: str, path: str, headers: dict[str, str], steps: int = 10, gap_s: float = 0.04
) -> int:
    """`steps` requests `gap_s` apart (T = 8, 7, 8, ...), each aborted when the next is sent;
    returns the status of the last one, read to the end."""
    previous: socket.socket | None = None
    for i in range(steps):
        sock = _send(base, path, {**LLAMA, "num_tokens": 8 - i % 2}, headers)
        if previous is not None:
            previous.close()  # the client gives up on the superseded step
        previous = sock
        time.sleep(gap_s)  # pacing the client (in order), not waiting for the server
    assert previous is not None
    return _status(previous)


def _wait_idle(base: str) -> dict[str, int]:
    deadline = time.monotonic() + 60
    stats = _compute(base)
    while stats["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
        stats = _compute(base)
    return stats


@pytest.mark.slow
def test_superseded_steps_are_dropped_and_the_newest_answered(base: str) -> None:
    # no-cache: every step is computed (T 8 is answered from memory after the warm-up)
    headers = {"x-ffn-lab-supersede": "flow/test-session", "cache-control": "no-cache"}
    warm = httpx.post(f"{base}/api/forward", json={**LLAMA, "num_tokens": 8}, timeout=120)
    assert warm.status_code == 200  # the weights are built once, outside the burst
    before = _wait_idle(base)
    # Another client's long view holds the one heavy worker (~0.4 s at LLaMA-7B) while the
    # burst arrives, 5 ms apart: the steps queue behind it, whatever this machine's speed.
    other = _send(base, "/api/variants", {**LLAMA, "num_tokens": 8}, {"cache-control": "no-cache"})
    assert _burst(base, "/api/forward", headers, gap_s=0.005) == 200
    assert _status(other) == 200
    after = _wait_idle(base)
    delta = {k: after[k] - before[k] for k in after}
    delta["started"] -= 1  # the other client's view
    delta["finished"] -= 1
    assert after["max_stale_running"] <= 1, after
    assert delta["dropped_superseded"] >= 1, delta  # the mechanism acted
    # every step is accounted for: started (maybe stopped at a checkpoint) or never started
    assert delta["started"] + delta["dropped_superseded"] + delta["dropped_disconnected"] == 10
    assert delta["finished"] + delta["stopped_superseded"] == delta["started"], delta


@pytest.mark.slow
def test_queued_work_of_a_client_that_left_is_not_started(base: str) -> None:
    """Without the header: each aborted request still waiting for the pool is dropped."""
    httpx.post(f"{base}/api/variants", json={**LLAMA, "num_tokens": 8}, timeout=120)
    before = _wait_idle(base)
    assert _burst(base, "/api/variants", {"cache-control": "no-cache"}) == 200  # computed
    after = _wait_idle(base)
    started = after["started"] - before["started"]
    gone = after["dropped_disconnected"] - before["dropped_disconnected"]
    assert gone >= 1, after
    assert started + gone == 10
