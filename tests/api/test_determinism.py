"""The same request gives byte-identical responses: across requests, restarts and workers.

The server is stateless (seeded weights, seeded inputs, seeded dropout), so any worker
process of any replica answers a request with the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.serverproc import child_pids, start_server, stop_server

REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("/api/forward", {"d_model": 64, "d_ff": 256, "activation": "relu", "num_tokens": 8}),
    ("/api/forward", {"d_model": 48, "d_ff": 128, "activation": "silu", "seed": 7,
                      "include_weights": True}),
    ("/api/forward", {"d_model": 32, "d_ff": 96, "activation": "swiglu", "bias": False,
                      "mode": "train", "dropout": 0.3, "dropout_seed": 5}),
    ("/api/forward", {"d_model": 3, "d_ff": 5, "activation": "gelu_tanh",
                      "tokens": [[0.1, -2.0, 3.5], [1e-3, 0.0, -0.25]]}),
    ("/api/perturb", {"d_model": 64, "d_ff": 256, "activation": "gelu", "num_tokens": 8,
                      "position": 3, "scale": 2.5, "direction_seed": 11}),
    ("/api/forward", {"d_model": -1}),  # errors too
]  # fmt: skip


def _digests(post: Any) -> list[str]:
    out = []
    for url, body in REQUESTS:
        response = post(url, body)
        out.append(f"{response.status_code}:{hashlib.sha256(response.content).hexdigest()}")
    return out


def test_same_bytes_across_requests_and_apps() -> None:
    with TestClient(create_app()) as c:
        first = _digests(lambda u, b: c.post(u, json=b))
        again = _digests(lambda u, b: c.post(u, json=b))
    with TestClient(create_app()) as fresh:  # a new app: empty weight cache
        other = _digests(lambda u, b: fresh.post(u, json=b))
    assert first == again == other
    assert len(set(first)) == len(REQUESTS)
    assert first[-1].startswith("422:")


def _socket_inode(server_port: int, client_port: int) -> str | None:
    """Inode of the server-side TCP socket of the connection from `client_port`."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if local_port == server_port and remote_port == client_port:
                return fields[9]
    return None


def _owner(pids: list[int], inode: str) -> int | None:
    target = f"socket:[{inode}]"
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == target:
                    return pid
            except OSError:
                continue
    return None


def _by_worker(base: str, pids: list[int], want: int, attempts: int = 60) -> dict[int, list[str]]:
    """Digests from connections answered by each worker (found through /proc)."""
    port = int(base.rsplit(":", 1)[1])
    found: dict[int, list[str]] = {}
    for _ in range(attempts):
        with httpx.Client(base_url=base, timeout=30) as session:
            first = session.get("/api/health")
            client_port = first.extensions["network_stream"].get_extra_info("client_addr")[1]
            inode = _socket_inode(port, client_port)
            pid = _owner(pids, inode) if inode else None
            if pid is not None and pid not in found:
                found[pid] = _digests(lambda u, b, s=session: s.post(u, json=b))
        if len(found) == want:
            break
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
def test_same_bytes_across_restarts_and_two_worker_processes() -> None:
    proc, base = start_server()
    try:
        with httpx.Client(base_url=base, timeout=30) as session:
            single = _digests(lambda u, b: session.post(u, json=b))
    finally:
        stop_server(proc)

    proc, base = start_server(workers=2)
    try:
        children = child_pids(proc.pid)  # the 2 workers (and multiprocessing's tracker)
        answers = _by_worker(base, children, want=2)
    finally:
        stop_server(proc)
    assert len(answers) == 2, f"reached {len(answers)} worker process(es) of 2"
    for pid, digests in answers.items():
        assert digests == single, pid
