"""A lecture under load: one lecturer, N students on event streams (`python -m benchmarks.lecture`).

The lecturer changes the page every 2 s (PUT /api/sessions/{code}/state), asks a question
each minute (10 s in) and reveals it (40 s in); every student holds an event stream
(GET /api/sessions/{code}/events) and answers each question once. Measured per setup:

- change -> event: from the lecturer's PUT being sent to each student's `state` event
  with that version, p50/p95/p99 over every (student, change) (goal: p95 <= 250 ms at 300);
- events lost: changes a student never received, and students whose last state is not the
  lecturer's last (goal 0);
- answers counted: the reveal's total against the answers the server accepted (goal: all);
- server RSS (every process of the setup, redis-server included);
- a student's phone (390x844, Chromium's CPU slowdown 4x): the lecturer's PUT -> that change
  drawn on the phone (benchmarks.follow, goal p95 <= 400 ms), the first flow (<= 3 s) and
  a first load's and a reload's bytes (<= 1 MB, <= 50 kB; benchmarks.page_load).

Setups, all started and stopped here: one process (in-memory sessions); two processes
behind nginx sharing sessions through a redis-server (the lecturer on one process
directly, students through nginx, so about half of them are on the other process). The
client's own ceiling is the same client on the trivial stream app (benchmarks/trivial_sse.py),
which fans a message out with nothing else to do. The client is one Python asyncio process
(httpx); the machine is shared with the servers: the load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from benchmarks import nginx
from tests.serverproc import free_port, rss_bytes, start_server, stop_server, wait_ready
from tests.sessionhelpers import RedisServer, redis_available


@dataclass
class Student:
    """What one simulated student saw."""

    index: int
    received: dict[int, float] = field(default_factory=dict)  # version -> time received
    last_state: dict[str, Any] | None = None
    last_version: int = -1
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    answered: int = 0
    refused: str = ""


@dataclass
class Result:
    setup: str
    students: int
    latencies_ms: list[float]
    changes: int
    lost: int
    stale_students: int
    answers_sent: int
    answers_counted: int
    answers_refused: int
    rss_mb: float
    connect_s: float

    def pct(self, q: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        data = sorted(self.latencies_ms)
        return data[min(len(data) - 1, int(q / 100 * len(data)))]


async def student_task(
    client: httpx.AsyncClient,
    base: str,
    path: str,
    me: Student,
    answer: Any,
    stop: asyncio.Event,
) -> None:
    device = f"bench-{me.index:06d}-{random.getrandbits(32):08x}"
    while not stop.is_set():
        try:
            async with client.stream("GET", f"{base}{path}?device={device}") as response:
                if response.status_code != 200:
                    await asyncio.sleep(0.5)
                    continue
                kind, data = "", ""
                async for line in response.aiter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data = line[5:].strip()
                    elif line == "" and data:
                        now = time.perf_counter()
                        payload = orjson.loads(data)
                        if kind == "state":
                            version = int(payload.get("version", 0))
                            me.received.setdefault(version, now)
                            me.last_state, me.last_version = payload.get("state"), version
                            me.connected.set()
                        elif kind == "question":
                            asyncio.get_running_loop().create_task(
                                answer(me, device, payload["question"])
                            )
                        elif kind == "ended":
                            return
                        kind, data = "", ""
                    if stop.is_set():
                        return
        except (httpx.HTTPError, asyncio.CancelledError):
            if stop.is_set():
                return
            await asyncio.sleep(0.2)


async def run_lecture(
    lecturer_base: str, student_base: str, students: int, seconds: float
) -> tuple[list[Student], dict[int, float], int, int]:
    """Returns (students, version -> sent time, answers accepted, reveal total)."""
    limits = httpx.Limits(max_connections=students + 50, max_keepalive_connections=students + 50)
    timeout = httpx.Timeout(30.0, read=None)
    async with (
        httpx.AsyncClient(limits=limits, timeout=timeout) as client,
        httpx.AsyncClient(limits=limits, timeout=30.0) as answers,
        httpx.AsyncClient(timeout=30.0) as lecturer,
    ):
        created = (await lecturer.post(f"{lecturer_base}/api/sessions")).json()
        code = created["code"]
        auth = {"Authorization": f"Bearer {created['presenter_token']}"}
        sent: dict[int, float] = {}
        accepted = 0
        ask_at, reveal_at = min(10.0, seconds / 6), min(40.0, 2 * seconds / 3)
        think_s = min(15.0, (reveal_at - ask_at) / 2)

        async def put(state: dict[str, Any]) -> None:
            t0 = time.perf_counter()
            r = await lecturer.put(
                f"{lecturer_base}/api/sessions/{code}/state", json=state, headers=auth
            )
            r.raise_for_status()
            sent[int(r.json()["version"])] = t0

        await put({"d_ff": 64})

        async def answer(me: Student, device: str, question: dict[str, Any]) -> None:
            nonlocal accepted
            await asyncio.sleep(random.uniform(0.5, think_s))
            choice = random.choice(question["choices"])["id"]
            body = {"question_id": question["id"], "choice": choice, "device": device}
            try:
                r = await answers.post(f"{student_base}/api/sessions/{code}/answers", json=body)
            except httpx.HTTPError as exc:
                me.refused = type(exc).__name__
                return
            if r.status_code == 200:
                me.answered += 1
                accepted += 1
            else:
                me.refused = f"{r.status_code} {r.text[:80]}"

        stop = asyncio.Event()
        crowd = [Student(i) for i in range(students)]
        path = f"/api/sessions/{code}/events"
        tasks = [
            asyncio.create_task(student_task(client, student_base, path, s, answer, stop))
            for s in crowd
        ]
        t_connect = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in crowd)), 120)
        connect_s = time.perf_counter() - t_connect
        start = time.perf_counter()
        step = 0
        revealed_total = -1
        question_id = None
        while time.perf_counter() - start < seconds:
            step += 1
            await asyncio.sleep(max(0.0, start + 2 * step - time.perf_counter()))
            elapsed = time.perf_counter() - start
            await put({"d_ff": 64 + 8 * (step % 24), "tokens": 1 + step % 8, "panel": "flow"})
            if question_id is None and elapsed >= ask_at:
                q = await lecturer.post(
                    f"{lecturer_base}/api/sessions/{code}/questions",
                    json={"kind": "parameter_count"},
                    headers=auth,
                )
                question_id = q.json()["id"]
            elif question_id and revealed_total < 0 and elapsed >= reveal_at:
                r = await lecturer.post(
                    f"{lecturer_base}/api/sessions/{code}/questions/{question_id}/reveal",
                    headers=auth,
                )
                revealed_total = int(r.json()["total"])
        last = max(sent)
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline and any(s.last_version < last for s in crowd):
            await asyncio.sleep(0.05)
        stop.set()
        await lecturer.delete(f"{lecturer_base}/api/sessions/{code}", headers=auth)
        await asyncio.wait(tasks, timeout=10)
        for task in tasks:
            task.cancel()
        run_lecture.connect_s = connect_s  # type: ignore[attr-defined]
        return crowd, sent, accepted, revealed_total


def summarise(
    setup: str, crowd: list[Student], sent: dict[int, float], accepted: int, total: int, rss: int
) -> Result:
    latencies = []
    lost = 0
    versions = [v for v in sent if v > 1]  # the first state was published before anyone came
    for s in crowd:
        for v in versions:
            if v in s.received:
                latencies.append((s.received[v] - sent[v]) * 1000)
            else:
                lost += 1
    last = max(sent)
    stale = sum(1 for s in crowd if s.last_version != last)
    refusals = Counter(s.refused for s in crowd if s.refused)
    if refusals:
        print(f"{setup}: answers refused: {dict(refusals)}")
    return Result(
        setup=setup,
        students=len(crowd),
        latencies_ms=latencies,
        changes=len(versions),
        lost=lost,
        stale_students=stale,
        answers_sent=accepted,
        answers_counted=total,
        answers_refused=sum(refusals.values()),
        rss_mb=rss / 1e6,
        connect_s=getattr(run_lecture, "connect_s", float("nan")),
    )


async def ceiling(students: int, seconds: float) -> Result:
    """The same client against benchmarks/trivial_sse.py: its own limit."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "benchmarks.trivial_sse:app", "--port", str(port),
         "--no-access-log", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, f"{base}/health")
        crowd = [Student(i) for i in range(students)]
        stop = asyncio.Event()
        limits = httpx.Limits(max_connections=students + 10)
        async with (
            httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30, read=None)) as client,
            httpx.AsyncClient() as lecturer,
        ):

            async def no_answer(*_: Any) -> None:
                return None

            tasks = [
                asyncio.create_task(student_task(client, base, "/events", s, no_answer, stop))
                for s in crowd
            ]
            await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in crowd)), 120)
            sent: dict[int, float] = {0: 0.0}
            start = time.perf_counter()
            for step in range(1, int(seconds / 2) + 1):
                await asyncio.sleep(max(0.0, start + 2 * step - time.perf_counter()))
                t0 = time.perf_counter()
                await lecturer.put(f"{base}/publish", content=orjson.dumps({"version": step}))
                sent[step] = t0
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline and any(s.last_version < step for s in crowd):
                await asyncio.sleep(0.05)
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=5)
        rss = rss_bytes(proc.pid)
    finally:
        stop_server(proc)
    return summarise("client ceiling (trivial stream app)", crowd, sent, 0, 0, rss)


def one_process(students: int, seconds: float) -> Result:
    proc, base = start_server()
    try:
        crowd, sent, accepted, total = asyncio.run(run_lecture(base, base, students, seconds))
        rss = rss_bytes(proc.pid)
    finally:
        stop_server(proc)
    return summarise("1 process, in-memory", crowd, sent, accepted, total, rss)


def two_replicas(students: int, seconds: float) -> Result:
    with RedisServer() as redis:
        env = {"FFN_LAB_REDIS_URL": redis.url}
        a, base_a = start_server(env)
        b, base_b = start_server(env)
        try:
            with nginx.Nginx(upstreams=[base_a, base_b]) as proxy:
                crowd, sent, accepted, total = asyncio.run(
                    run_lecture(base_a, proxy.base, students, seconds)
                )
            rss = rss_bytes(a.pid) + rss_bytes(b.pid) + rss_bytes(redis._proc.pid)  # type: ignore[union-attr]
        finally:
            stop_server(a)
            stop_server(b)
    return summarise("2 processes + nginx + Redis", crowd, sent, accepted, total, rss)


def report(results: list[Result], load: tuple[float, float, float]) -> str:
    lines = [
        f"Lecture benchmark: {results[0].students} students, a change every 2 s; "
        f"load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"after {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores; the load shows what else ran)",
        "",
        f"{'setup':40} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'lost':>5} {'stale':>5} "
        f"{'answers':>9} {'late':>5} {'RSS MB':>8} {'join s':>7}",
    ]
    for r in results:
        answers = f"{r.answers_counted}/{r.answers_sent}" if r.answers_sent else "-"
        lines.append(
            f"{r.setup:40} {r.pct(50):8.1f} {r.pct(95):8.1f} {r.pct(99):8.1f} {r.lost:5d} "
            f"{r.stale_students:5d} {answers:>9} {r.answers_refused:5d} {r.rss_mb:8.0f} "
            f"{r.connect_s:7.1f}"
        )
    lines += [
        "",
        "goal: change -> event p95 <= 250 ms at 300 students; lost 0; every answer counted.",
        "lost = (student, change) pairs never received; stale = students whose last state is",
        "not the lecturer's last; answers = the reveal's total / answers the server accepted;",
        "late = answers sent after the reveal (refused with 409: the client fell behind);",
        "the ceiling row is the same client on an app that does nothing but fan out.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--setups",
        default="ceiling,one,replicas,phone",
        help="comma list of ceiling, one, replicas, phone",
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()
    results = []
    setups = args.setups.split(",")
    if "ceiling" in setups:
        results.append(asyncio.run(ceiling(args.students, min(args.seconds, 20))))
    if "one" in setups:
        results.append(one_process(args.students, args.seconds))
    if "replicas" in setups:
        if not (redis_available() and nginx.available()):
            print("skipped 2 replicas: needs redis-server and nginx (apt-get install)")
        else:
            results.append(two_replicas(args.students, args.seconds))
    print(report(results, load))
    if "phone" in setups:
        print()
        print(phone_report())
    return 0


def phone_report(changes: int = 30, loads: int = 3) -> str:
    """A student's phone in the lecture (benchmarks.follow, benchmarks.page_load): a followed
    change drawn after the lecturer's PUT, the first flow, and a first load's and a reload's
    bytes, each from a server of its own."""
    from playwright.sync_api import sync_playwright

    from benchmarks.client import percentile
    from benchmarks.follow import run as follow
    from benchmarks.page_load import measure_bytes, phone_first_flow
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    lines = [follow(None, changes)]
    proc, base = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                flows = phone_first_flow(browser, base, loads)
                got = measure_bytes(browser, base)
            finally:
                browser.close()
    finally:
        stop_server(proc)
    first = percentile(flows, 50)
    lines += [
        f"phone 390x844, CPU 4x: first flow drawn {first:.2f} s after navigation, p50 of {loads} "
        f"({', '.join(f'{t:.2f}' for t in flows)}; goal <= 3 s: "
        f"{'met' if first <= 3 else 'MISSED'}; loopback)",
        f"a student's first load {got.first_bytes / 1000:.0f} kB in {got.first_requests} "
        f"requests (goal <= 1000 kB), reload {got.reload_bytes / 1000:.1f} kB "
        f"(goal <= 50 kB); load {os.getloadavg()[0]:.2f}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
