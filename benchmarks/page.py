"""The page's figures of `python -m benchmarks.run --page`: how live the instrument feels.

Per preset (default, Transformer-base, BERT-base, LLaMA-7B) and window size (1280x720,
1920x1080), the page as it opens, headless Chromium (benchmarks.browser.measure_steps):

- a value step (the input seed s <-> s+1: new values, same shapes) -> the last chart in
  sight drawn, p50 and p95, against 50 ms (default), 67 ms (Transformer-base, BERT-base),
  100 ms (LLaMA-7B);
- a shape step (Tokens T <-> T-1) against twice those;
- the floor beside them: one frame, and Plotly's own cost of one small heatmap per call;

then a phone (390x844, touch, scale 3, Chromium's CPU slowdown 4x): a Tokens step p50
(<= 200 ms) and the first flow drawn after navigation (<= 3 s, benchmarks.page_load);
a student's first-load and reload bytes (<= 1 MB, <= 50 kB); a dragged Tokens slider
(benchmarks.drag, the median of three drags: at least every other frame's value drawn, one
request per value, the last value drawn); and the request ratio at L
(32 x 1024 -> 4096): the request's latency over the server's own forward time, seeded and
with its own tokens in the body (<= 3), right after the browser ran and again while a
headless Chromium page spins a core (a browser still busy), with the request's time outside
the forward named beside it. Every figure carries the load average when it was taken: the
machine is shared.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx
import numpy as np
import psutil

from benchmarks.browser import PAGE_PRESETS, measure_steps
from benchmarks.client import percentile
from benchmarks.drag import measure_drag
from benchmarks.wrk import trivial_server
from tests.browser.conftest import CHROMIUM

VALUE_BOUND_MS = {"default": 50, "transformer-base": 67, "bert-base": 67, "llama-7b": 100}
"""A value step's target per preset (ms, p50); a shape step's is twice it."""
SIZES = {"1280x720": (1280, 720), "1920x1080": (1920, 1080)}
FRAME_MS = 1000.0 / 60.0
PHONE_STEP_MS = 200
PHONE_FIRST_FLOW_S = 3.0
FIRST_LOAD_BYTES = 1_000_000
RELOAD_BYTES = 50_000
L_RATIO = 3.0


def load() -> str:
    """The 1-minute load average now (2 cores: above 2 means others waited for a core)."""
    return f"load {os.getloadavg()[0]:.1f}"


def row(metric: str, measured: str, target: str, ok: bool | None, bound: str) -> dict[str, Any]:
    return {"metric": metric, "measured": measured, "target": target, "ok": ok, "bound": bound}


def step_rows(base: str, presets: list[str], steps: int) -> list[dict[str, Any]]:
    """Value and shape steps per preset and window size."""
    rows: list[dict[str, Any]] = []
    for size, viewport in SIZES.items():
        for kind, factor in (("seed", 1), ("tokens", 2)):
            found = measure_steps(
                base, {p: PAGE_PRESETS[p] for p in presets}, steps, kind=kind, viewport=viewport
            )
            at = load()
            for name, result in found.items():
                bound = VALUE_BOUND_MS[name] * factor
                p50 = percentile(result.visible_ms, 50)
                p95 = percentile(result.visible_ms, 95)
                what = "value step (input seed)" if kind == "seed" else "shape step (Tokens)"
                charts = round(statistics.median(result.charts_visible or [0]))
                rows.append(
                    row(
                        f"{name} {size}: {what} -> {charts} plots in sight drawn p50 / p95",
                        f"{p50:.0f} / {p95:.0f} ms",
                        f"p50 <= {bound} ms",
                        p50 <= bound,
                        f">= {FRAME_MS:.1f} ms (1 frame); Plotly per small heatmap "
                        f"{result.plotly_floor_ms:.1f} ms; {at}",
                    )
                )
    return rows


def phone_rows(base: str, steps: int, loads: int) -> list[dict[str, Any]]:
    """A Tokens step and the first flow on a phone, and a student's bytes."""
    from playwright.sync_api import sync_playwright

    from benchmarks.page_load import measure_bytes, phone_first_flow
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    rows: list[dict[str, Any]] = []
    found = measure_steps(base, {"default": ""}, steps, viewport=(390, 844), phone=True)
    result = found["default"]
    p50 = percentile(result.visible_ms, 50)
    rows.append(
        row(
            "phone 390x844, CPU 4x: Tokens step -> plots in sight drawn p50",
            f"{p50:.0f} ms",
            f"<= {PHONE_STEP_MS} ms",
            p50 <= PHONE_STEP_MS,
            f">= {FRAME_MS:.1f} ms (1 frame); {load()}",
        )
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            flows = phone_first_flow(browser, base, loads)
            at = load()
            first = percentile(flows, 50)
            rows.append(
                row(
                    f"phone 390x844, CPU 4x: first flow drawn after navigation p50 of {loads}",
                    f"{first:.2f} s",
                    f"<= {PHONE_FIRST_FLOW_S:g} s",
                    first <= PHONE_FIRST_FLOW_S,
                    f"loopback; {', '.join(f'{t:.2f}' for t in flows)} s; {at}",
                )
            )
            got = measure_bytes(browser, base)
            at = load()
        finally:
            browser.close()
    rows.append(
        row(
            f"a student's first load ({got.first_requests} requests)",
            f"{got.first_bytes / 1000:.0f} kB",
            f"<= {FIRST_LOAD_BYTES // 1000} kB",
            got.first_bytes <= FIRST_LOAD_BYTES,
            f"CDP bytes received; largest {got.first_top[0][0][:40]} "
            f"{got.first_top[0][1] / 1000:.0f} kB; {at}",
        )
    )
    rows.append(
        row(
            f"a student's reload ({got.reload_requests} requests)",
            f"{got.reload_bytes / 1000:.1f} kB",
            f"<= {RELOAD_BYTES // 1000} kB",
            got.reload_bytes <= RELOAD_BYTES,
            f"CDP bytes received; largest {got.reload_top[0][0][:40]} "
            f"{got.reload_top[0][1] / 1000:.1f} kB; {at}",
        )
    )
    return rows


DRAGS = 3
"""Drags measured (each on a newly opened page); the figure is their median."""


def drag_rows(base: str) -> list[dict[str, Any]]:
    """A dragged Tokens slider on the page as it opens (benchmarks.drag), DRAGS times: the
    median drag's values shown per two frames (>= 1), and in every drag one request per
    drawn value and the last value drawn."""
    drags = sorted((measure_drag(base) for _ in range(DRAGS)), key=lambda d: d.per_two_frames)
    got = drags[len(drags) // 2]
    at = load()
    ok = got.per_two_frames >= 1 and all(
        d.requests <= d.drawn + 1 and d.last_rows == d.let_go for d in drags
    )
    each = ", ".join(f"{d.per_two_frames:.2f}" for d in drags)
    return [
        row(
            "default 1280x720: Tokens slider dragged -> values shown per 2 frames",
            f"{got.per_two_frames:.2f}",
            ">= 1, 1 request per value, last value drawn",
            ok,
            f"median of {DRAGS} drags ({each}); the median: {got.shown_during} values shown "
            f"({got.drawn_during} drawn) in {got.drag_ms / 1000:.2f} s of drag (a move per "
            f"frame); {got.requests} requests for {got.drawn} drawn; last drawn T "
            f"{got.last_rows}, let go at {got.let_go}; {at}",
        )
    ]


def _timed(client: httpx.Client, body: bytes) -> tuple[float, dict[str, float], int]:
    """Seconds for one POST /api/forward, the server's phases in seconds (its Server-Timing:
    model, forward, analysis, encode), answer bytes."""
    t0 = time.perf_counter()
    response = client.post("/api/forward", content=body)
    elapsed = time.perf_counter() - t0
    response.raise_for_status()
    timing = dict(
        part.strip().split(";dur=") for part in response.headers["server-timing"].split(",")
    )
    return elapsed, {k: float(v) / 1000 for k, v in timing.items()}, len(response.content)


def _ceiling(bodies: dict[str, bytes], sizes: dict[str, int], count: int) -> dict[str, float]:
    """p50 seconds of the same client sending each body to the benchmark's trivial app
    (same uvicorn, no FFN, no checks) and reading an answer of the same size."""
    headers = {"content-type": "application/json"}
    got: dict[str, list[float]] = {name: [] for name in bodies}
    with trivial_server() as base, httpx.Client(base_url=base, headers=headers) as client:
        for i in range(count + 3):
            for name, body in bodies.items():
                t0 = time.perf_counter()
                client.post("/answer", params={"size": sizes[name]}, content=body)
                if i >= 3:
                    got[name].append(time.perf_counter() - t0)
    return {name: statistics.median(times) for name, times in got.items()}


def l_ratio_rows(base: str, count: int, condition: str = "") -> list[dict[str, Any]]:
    """Latency p50 over the server's forward p50 at L: seeded tokens, then the same size with
    its own 32 x 1024 tokens in the body (340 kB of JSON), alternating requests. The bound
    names the client's ceiling (the same bytes through the trivial app) and the request's
    time outside the forward: the server's other phases and the rest (the client, uvicorn,
    reading and checking the body). `condition` is added to each row's name."""
    config = {"d_model": 1024, "d_ff": 4096, "activation": "relu", "bias": True, "seed": 0}
    tokens = np.round(np.random.default_rng(0).standard_normal((32, 1024)), 6).tolist()
    bodies = {
        "seeded tokens": json.dumps({**config, "num_tokens": 32, "input_seed": 0}).encode(),
        "its own tokens": json.dumps({**config, "tokens": tokens}).encode(),
    }
    headers = {"content-type": "application/json", "cache-control": "no-cache"}
    got: dict[str, tuple[list[float], list[dict[str, float]]]] = {k: ([], []) for k in bodies}
    sizes: dict[str, int] = {}
    with httpx.Client(base_url=base, timeout=120, headers=headers) as client:
        for i in range(count + 3):
            for name, body in bodies.items():
                elapsed, phases, sizes[name] = _timed(client, body)
                if i >= 3:
                    got[name][0].append(elapsed)
                    got[name][1].append(phases)
    at = load()
    ceiling = _ceiling(bodies, sizes, count)
    rows = []
    for name, (latencies, phases) in got.items():
        p50 = statistics.median(latencies)
        parts = {k: statistics.median(p[k] for p in phases) for k in phases[0]}
        fwd = parts["forward"]
        outside = ", ".join(f"{k} {v * 1000:.1f}" for k, v in parts.items() if k != "forward")
        rest = p50 - sum(parts.values())
        rows.append(
            row(
                f"L request ÷ forward, {name}{condition} ({p50 * 1000:.1f} / {fwd * 1000:.1f} ms)",
                f"{p50 / fwd:.2f}",
                f"<= {L_RATIO:g}",
                p50 / fwd <= L_RATIO,
                f">= 1 (the forward in the server, Server-Timing); outside it: {outside}, "
                f"the rest {rest * 1000:.1f} ms (client, uvicorn, reading the body); the client "
                f"and uvicorn alone, same bytes: {ceiling[name] * 1000:.1f} ms; {count} "
                f"requests; {at}",
            )
        )
    return rows


@contextmanager
def busy_browser() -> Iterator[None]:
    """A headless Chromium whose page spins one core (a browser still busy beside the
    server: a student's machine, or a benchmark's browser not yet gone); stopped on exit.
    It loads a page of its own, sends nothing anywhere."""
    spin = "data:text/html,<script>for(;;){}</script>"
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", spin],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # until its renderer holds a core: the load average is too slow to wait on, so the
        # process tree's CPU time is read until it grows by a second's worth
        _wait_for_cpu(proc.pid, seconds=1.0, timeout=20.0)
        yield
    finally:
        # the browser and every process it started (renderer, zygote, utility)
        tree = [psutil.Process(proc.pid)]
        with suppress(psutil.Error):
            tree += tree[0].children(recursive=True)
        for member in tree:
            with suppress(psutil.Error):
                member.terminate()
        _, alive = psutil.wait_procs(tree, timeout=10)
        for member in alive:
            member.kill()
        proc.wait()


def _wait_for_cpu(pid: int, seconds: float, timeout: float) -> None:
    """Return once the process tree of `pid` has used `seconds` of CPU (or `timeout` passed)."""
    deadline = time.monotonic() + timeout
    root = psutil.Process(pid)
    while time.monotonic() < deadline:
        used = 0.0
        for proc in [root, *root.children(recursive=True)]:
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            used += times.user + times.system
        if used >= seconds:
            return
        time.sleep(0.1)
