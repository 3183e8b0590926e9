"""wrk (Debian's package, a C load generator) driven from Python: bounded runs on loopback.

`run_wrk` writes a Lua script (method, body and headers of a POST, and a `done` hook that
prints the figures as JSON) to a temporary directory, runs `wrk -t T -c C -d D`, and
returns requests/s, latency percentiles and errors. `trivial_server` starts the
benchmark's own one-route FastAPI app (benchmarks/trivial_app.py) with the same uvicorn
command as FFN Lab; `Nginx` (benchmarks/nginx.py) serves a fixed answer to measure wrk's
own ceiling.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.serverproc import ROOT, free_port, stop_server, wait_ready

_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, ' ..
    '"read": %d, "write": %d, "status": %d, "timeout": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
"""


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: answered requests per second (non-2xx and socket errors counted in
    `errors`, not subtracted from `requests`), latency percentiles in ms."""

    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float
    bytes: int

    @property
    def rps(self) -> float:
        """Requests per second over the run."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0


def available() -> bool:
    """True when the `wrk` binary is on PATH (apt-get install wrk)."""
    return shutil.which("wrk") is not None


_VARY = "__FFN_LAB_WRK_COUNTER__"
_RUNS = itertools.count(1)


def lua_script(
    method: str = "GET",
    body: Any = None,
    headers: dict[str, str] | None = None,
    vary: str | None = None,
    vary_from: int = 1000,
) -> str:
    """A wrk Lua script for one request (a JSON `body` for POST) plus the done hook.

    `vary`: a key of `body` that takes a new integer (a counter, per wrk thread, from
    `vary_from`) in every request, so that no two bodies are the same (nothing is answered
    from memory).
    """
    lines = [f"wrk.method = {json.dumps(method)}"]
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(json.dumps(body))}")
        lines.append('wrk.headers["Content-Type"] = "application/json"')
    for name, value in (headers or {}).items():
        lines.append(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
    if vary is not None:
        if not isinstance(body, dict) or vary not in body:
            raise ValueError(f"vary={vary!r} must be a key of the JSON body")
        template = json.dumps({**body, vary: _VARY}).replace("%", "%%")
        template = template.replace(f'"{_VARY}"', "%d")
        lines += [
            f"counter = {vary_from}",
            "request = function()",
            "  counter = counter + 1",
            f"  return wrk.format(nil, nil, nil, string.format({json.dumps(template)}, counter))",
            "end",
        ]
    return "\n".join(lines) + "\n" + _DONE


def run_wrk(
    url: str,
    *,
    seconds: float = 3.0,
    connections: int = 4,
    threads: int = 1,
    method: str = "GET",
    body: Any = None,
    vary: str | None = None,
    timeout_s: float = 10.0,
) -> WrkResult:
    """`wrk -t threads -c connections -d seconds` against `url` (loopback only); stops by
    itself after `seconds` (killed after seconds + 30). `vary`: see `lua_script`."""
    if not url.startswith(("http://127.0.0.1", "http://localhost")):
        raise ValueError(f"wrk runs against loopback only, not {url}")
    with tempfile.TemporaryDirectory(prefix="ffn-lab-wrk-") as tmp:
        script = Path(tmp) / "request.lua"
        start = next(_RUNS) * 10_000_000  # no run repeats an earlier run's bodies
        script.write_text(lua_script(method, body, vary=vary, vary_from=start), encoding="utf-8")
        cmd = [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            f"--timeout={max(1, round(timeout_s))}s",
            "-s",
            str(script),
            url,
        ]
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=seconds + 30, check=True
        ).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRK_JSON "))
    data = json.loads(line.removeprefix("WRK_JSON "))
    errors = sum(data[k] for k in ("connect", "read", "write", "status", "timeout"))
    return WrkResult(
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        errors=errors,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        bytes=data["bytes"],
    )


@contextmanager
def trivial_server() -> Iterator[str]:
    """The one-route app under the same uvicorn command as FFN Lab; yields its base URL."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "benchmarks.trivial_app:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, f"{base}/", timeout_s=60)
        yield base
    finally:
        stop_server(proc)


def get_ok(url: str) -> bool:
    """True when GET `url` answers 200 (a quick sanity check before a load run)."""
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
