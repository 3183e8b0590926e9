"""A real server process for tests and benchmarks: `uvicorn app.main:create_app` on loopback.

Shared by the determinism, load and browser tests and by benchmarks/ (the same helper as
`tests/browser/conftest.py::start_server`, importable without a conftest).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    env: dict[str, str] | None = None,
    workers: int = 1,
    port: int | None = None,
    root: Path = ROOT,
    ready_timeout_s: float = 60,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start the app of the checkout `root` (default: this one) on 127.0.0.1 (a free port
    unless `port`); returns (process, base URL).

    Waits until /api/health answers (at most `ready_timeout_s`). Stop it with
    `stop_server(proc)`.
    """
    port = port or free_port()
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "app.main:create_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--no-access-log",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    wait_ready(proc, f"{base}/api/health", timeout_s=ready_timeout_s)
    return proc, base


def wait_ready(proc: subprocess.Popen[bytes], url: str, timeout_s: float = 60) -> None:
    """Wait until GET `url` answers 200; stop the process and raise if it does not in time
    (or exits)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError(f"server did not answer {url} in {timeout_s:g} s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server (and its workers) and wait for it."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def rss_bytes(pid: int) -> int:
    """Resident memory of process `pid` plus its children (Linux /proc), in bytes."""
    total = 0
    for p in [pid, *child_pids(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid` (uvicorn's worker processes), from /proc."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        if children.exists():
            out += [int(c) for c in children.read_text().split()]
    return out


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on a thread of its own: a test that drives its own event loop runs
    the same after a browser test in the same process (Playwright's sync API keeps a loop
    running on the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
