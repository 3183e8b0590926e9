"""A class at once: N students each take one slider step every P seconds.

One step is the page's real request mix for a Tokens step (captured from headless Chromium
by `benchmarks.browser.measure_steps`, or the committed benchmarks/step_mix.json): all its
requests are sent at once, as the page does, with up to 6 connections per student (a
browser's limit per host); the step's latency is until its last answer. Students start at
random offsets within the first period and step on their own schedule (a step that runs
late delays that student's next one). Bounded: loopback only, N x (duration / P) steps at
most, stops by itself.

    python -m benchmarks.classroom                      # 50 students, 2 s, 60 s, 1 process
    python -m benchmarks.classroom --nginx              # the same through nginx, 2 processes
    python -m benchmarks.classroom --students 5 --duration 6 --json

The client is Python asyncio with a minimal HTTP/1.1 keep-alive client on asyncio streams
(httpx tops out at a few hundred requests/s here): its own ceiling (the same students with
no pause against nginx's fixed answer) is measured and printed next to the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from benchmarks.client import percentile
from benchmarks.nginx import Nginx
from benchmarks.server import COMPUTED
from tests.serverproc import start_server, stop_server

MIX_FILE = Path(__file__).with_name("step_mix.json")
BROWSER_CONNECTIONS = 6
KEEPALIVE_S = 3.0
"""An idle connection is reused for at most this long (uvicorn closes them after 5 s)."""


@dataclass(frozen=True)
class ClassResult:
    """What a class run measured (latencies in ms)."""

    students: int
    period_s: float
    duration_s: float
    steps: int
    requests: int
    errors: int
    steps_per_s: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    statuses: dict[str, int]


def load_mix(path: Path = MIX_FILE) -> list[dict[str, Any]]:
    """The request mix of one step: [{"method", "path", "body"}, ...]."""
    mix: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return mix


def _with_tokens(body: Any, step: int) -> Any:
    """The body of step `step`: T and T-1 alternate (the slider goes back and forth)."""
    if isinstance(body, dict) and isinstance(body.get("num_tokens"), int):
        t = body["num_tokens"]
        return {**body, "num_tokens": max(1, t - 1) if step % 2 else t}
    return body


class _Connections:
    """At most BROWSER_CONNECTIONS keep-alive HTTP/1.1 connections to one host (a
    browser's limit per host), on asyncio streams; answers need a Content-Length or
    chunked encoding (uvicorn and nginx send one of them)."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
        self.gate = asyncio.Semaphore(BROWSER_CONNECTIONS)

    async def request(self, method: str, path: str, body: bytes | None) -> int:
        """One request; returns the status (the body is read and dropped)."""
        async with self.gate:
            conn = None
            while self.idle and conn is None:
                reader, writer, since = self.idle.pop()
                if time.perf_counter() - since < KEEPALIVE_S:
                    conn = (reader, writer)
                else:  # the server may be closing it (uvicorn: 5 s idle)
                    writer.close()
            if conn is None:
                conn = await asyncio.open_connection(self.host, self.port)
            reader, writer = conn
            head = f"{method} {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
            if body is not None:
                head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
            writer.write(head.encode() + b"\r\n" + (body or b""))
            await writer.drain()
            header = await reader.readuntil(b"\r\n\r\n")
            lines = header.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            fields = dict(
                (k.strip().lower(), v.strip()) for k, _, v in (x.partition(":") for x in lines[1:])
            )
            if "content-length" in fields:
                await reader.readexactly(int(fields["content-length"]))
            elif fields.get("transfer-encoding") == "chunked":
                while True:
                    size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                    await reader.readexactly(size + 2)
                    if size == 0:
                        break
            if fields.get("connection", "").lower() == "close":
                writer.close()
            else:
                self.idle.append((reader, writer, time.perf_counter()))
            return status

    def close(self) -> None:
        for _, writer, _ in self.idle:
            writer.close()
        self.idle.clear()


def _bodies(mix: list[dict[str, Any]]) -> list[tuple[bytes | None, bytes | None]]:
    """Each request's encoded body for even and odd steps."""
    out = []
    for item in mix:
        if item["method"] == "GET":
            out.append((None, None))
        else:
            out.append(
                (
                    orjson.dumps(_with_tokens(item["body"], 0)),
                    orjson.dumps(_with_tokens(item["body"], 1)),
                )
            )
    return out


async def _step(
    conns: _Connections,
    mix: list[dict[str, Any]],
    bodies: list[tuple[bytes | None, bytes | None]],
    step: int,
    statuses: dict[str, int],
) -> tuple[float, int, int]:
    """All requests of one step at once (at most BROWSER_CONNECTIONS in flight);
    returns (seconds to the last answer, requests, errors)."""

    async def one(item: dict[str, Any], body: tuple[bytes | None, bytes | None]) -> bool:
        try:
            key = str(await conns.request(item["method"], item["path"], body[step % 2]))
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            key = type(exc).__name__
        statuses[key] = statuses.get(key, 0) + 1
        return key == "200"

    t0 = time.perf_counter()
    ok = await asyncio.gather(*(one(item, b) for item, b in zip(mix, bodies, strict=True)))
    return time.perf_counter() - t0, len(ok), ok.count(False)


async def _run_class(
    base: str,
    mix: list[dict[str, Any]],
    students: int,
    period: float,
    duration: float,
    seed: int,
    pause: bool = True,
) -> ClassResult:
    rng = random.Random(seed)
    latencies: list[float] = []
    counts = {"requests": 0, "errors": 0}
    statuses: dict[str, int] = {}
    bodies = _bodies(mix)
    started = time.perf_counter()
    deadline = started + duration

    async def student(offset: float) -> None:
        conns = _Connections(base)
        next_at = started + offset
        step = 0
        try:
            while True:
                if pause:
                    await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                if time.perf_counter() >= deadline:
                    return
                seconds, n, errors = await _step(conns, mix, bodies, step, statuses)
                latencies.append(seconds)
                counts["requests"] += n
                counts["errors"] += errors
                step += 1
                next_at += period
        finally:
            conns.close()

    offsets = [rng.uniform(0, period) if pause else 0.0 for _ in range(students)]
    await asyncio.gather(*(student(o) for o in offsets))
    wall = time.perf_counter() - started
    return ClassResult(
        students=students,
        period_s=period,
        duration_s=round(wall, 2),
        steps=len(latencies),
        requests=counts["requests"],
        errors=counts["errors"],
        steps_per_s=len(latencies) / wall if wall > 0 else 0.0,
        p50_ms=percentile(latencies, 50) * 1000,
        p95_ms=percentile(latencies, 95) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        statuses=statuses,
    )


def run_class(
    base: str,
    mix: list[dict[str, Any]],
    students: int = 50,
    period: float = 2.0,
    duration: float = 60.0,
    seed: int = 0,
) -> ClassResult:
    """`students` stepping every `period` s for `duration` s against `base` (loopback)."""
    if not base.startswith("http://127.0.0.1"):
        raise ValueError("the class benchmark runs against loopback only")
    return asyncio.run(_run_class(base, mix, students, period, duration, seed))


def client_ceiling(mix: list[dict[str, Any]], students: int, seconds: float = 4.0) -> float:
    """Requests/s this client reaches with `students` stepping without pause against
    nginx's fixed answer (every request of the mix sent to /__nginx_ok)."""
    fixed = [{"method": "GET", "path": "/__nginx_ok", "body": None} for _ in mix]
    with Nginx() as proxy:
        result = asyncio.run(_run_class(proxy.base, fixed, students, 0.0, seconds, 0, pause=False))
    return result.requests / result.duration_s if result.duration_s else 0.0


def identical_through_either(
    bases: list[str], proxy: str, mix: list[dict[str, Any]]
) -> tuple[int, int]:
    """(answers compared, answers that differed): every request of the mix sent to each
    process directly and twice through the proxy (round robin: both processes); bodies
    compared byte for byte."""
    compared = differed = 0
    with httpx.Client(timeout=120) as http:
        for item in mix:
            bodies = []
            for url in [*bases, proxy, proxy]:
                if item["method"] == "GET":
                    response = http.get(url + item["path"])
                else:
                    response = http.post(url + item["path"], json=item["body"])
                bodies.append(response.content)
            compared += len(bodies) - 1
            differed += sum(b != bodies[0] for b in bodies[1:])
    return compared, differed


def warm(base: str, mix: list[dict[str, Any]]) -> None:
    """One step's requests once (imports, seeded weights), before timing."""
    with httpx.Client(base_url=base, timeout=120) as http:
        for item in mix:
            if item["method"] == "GET":
                http.get(item["path"])
            else:
                http.post(item["path"], json=item["body"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--period", type=float, default=2.0, help="seconds between steps")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds")
    parser.add_argument("--mix", type=Path, default=MIX_FILE)
    parser.add_argument("--nginx", action="store_true", help="through nginx, 2 processes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    mix = load_mix(args.mix)
    out: dict[str, Any] = {"mix_requests": len(mix)}
    out["client_ceiling_rps"] = client_ceiling(mix, args.students)
    if args.nginx:
        procs = [start_server(COMPUTED), start_server(COMPUTED)]
        try:
            bases = [b for _, b in procs]
            with Nginx(bases) as proxy:
                for b in bases:
                    warm(b, mix)
                out["compared"], out["differed"] = identical_through_either(bases, proxy.base, mix)
                result = run_class(proxy.base, mix, args.students, args.period, args.duration)
        finally:
            for proc, _ in procs:
                stop_server(proc)
    else:
        proc, base = start_server(COMPUTED)
        try:
            warm(base, mix)
            result = run_class(base, mix, args.students, args.period, args.duration)
        finally:
            stop_server(proc)
    out |= asdict(result)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
