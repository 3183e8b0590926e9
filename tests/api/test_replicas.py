"""Replicas that fail without losing work: behind the documented nginx configuration
(deploy/nginx.conf), a replica killed under load loses no pure request (nginx sends it to
the other one); `ffn-lab --workers N` restarts a worker that died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from benchmarks.nginx import Nginx, available
from tests.serverproc import ROOT, child_pids, free_port, start_server, stop_server, wait_ready

pytestmark = pytest.mark.skipif(not available(), reason="nginx is not installed")

REQUESTS = 60


def _body(i: int) -> dict[str, int]:
    # distinct bodies (no answer cache), big enough to be in flight when the replica dies
    return {"d_model": 512, "d_ff": 2048, "num_tokens": 32, "seed": i, "input_seed": i}


@pytest.mark.slow
def test_a_killed_replica_loses_no_pure_request() -> None:
    first, a = start_server()
    second, b = start_server()
    answered = threading.Event()
    try:
        with Nginx([a, b], deploy=True) as proxy, httpx.Client(timeout=60) as client:

            def post(i: int) -> int:
                response = client.post(f"{proxy.base}/api/forward", json=_body(i))
                answered.set()
                return response.status_code

            with ThreadPoolExecutor(8) as pool:
                futures = [pool.submit(post, i) for i in range(REQUESTS)]
                answered.wait(60)
                first.kill()  # SIGKILL: requests in flight on it are dropped
                statuses = [f.result() for f in futures]
            assert first.wait(10) == -signal.SIGKILL
            assert statuses == [200] * REQUESTS, {s: statuses.count(s) for s in statuses}
    finally:
        stop_server(first)
        stop_server(second)


@pytest.mark.slow
def test_uvicorn_workers_restart_a_dead_worker() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--port", str(port), "--workers", "2"],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, f"{base}/api/health")
        workers = _children(proc.pid, 2)
        os.kill(workers[0], signal.SIGKILL)
        after = _children(proc.pid, 2, without=workers[0])
        assert workers[0] not in after and workers[1] in after
        assert httpx.get(f"{base}/api/health", timeout=10).status_code == 200
    finally:
        stop_server(proc)


def _children(pid: int, count: int, without: int | None = None) -> list[int]:
    """The supervisor's `count` worker pids (not `without`), polled for at most 60 s."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = [p for p in child_pids(pid) if _is_worker(p)]
        if len(pids) == count and without not in pids:
            return sorted(pids, key=lambda p: p != without)
        time.sleep(0.2)  # polling the process table: there is no event to wait on
    raise AssertionError(f"no {count} workers of {pid} within 60 s (have {child_pids(pid)})")


def _is_worker(pid: int) -> bool:
    """A uvicorn worker (spawned by multiprocessing), not its resource tracker."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmdline
