"""The live page's and the class's targets, measured: what `python -m benchmarks.run` adds.

- `page_rows`: one Tokens step of the page as it opens, per preset (headless Chromium,
  1280x720): visible plots redrawn p50, the step's last request done p50, bytes per step;
- `wrk_rows`: requests/s by wrk of /api/forward at S and /api/health against the
  benchmark's own trivial FastAPI app (same uvicorn), and wrk's own ceiling (nginx's fixed
  answer) against that trivial app;
- `class_rows`: 50 students, one step every 2 s for 60 s, on one process, then through
  nginx in front of two processes (byte-identical answers checked).

Each returns rows {metric, measured, target, ok, bound}. See benchmarks/README.md.
"""

from __future__ import annotations

import statistics
from typing import Any

import httpx

from benchmarks import classroom, nginx, wrk
from benchmarks.bench_teaching import PASSES
from benchmarks.browser import PAGE_PRESETS, StepResult, measure_steps
from benchmarks.server import COMPUTED
from tests.serverproc import start_server, stop_server

MB = 1_000_000
FRAME_MS = 1000.0 / 60.0
VISIBLE_TARGET_MS = {"default": 50, "transformer-base": 100, "bert-base": 100, "llama-7b": 250}
LAST_TARGET_S = {"default": 0.5, "transformer-base": 0.7, "bert-base": 0.7, "llama-7b": 1.0}
# FFN passes per request of the page's mix (forward 1, perturb 2, the teaching views as
# benchmarks/bench_teaching.py counts them); unknown paths count 0.
MIX_PASSES = {"/api/forward": 1, "/api/perturb": 2, **PASSES}


def row(metric: str, measured: str, target: str, ok: bool | None, bound: str) -> dict[str, Any]:
    return {"metric": metric, "measured": measured, "target": target, "ok": ok, "bound": bound}


def _pass_ms(body: dict[str, Any], gflops: float, gbs: float) -> float:
    """One forward pass's bound in ms for a request body: max(FLOPs / peak, weights / bandwidth)."""
    from benchmarks import limits

    d_model, d_ff = int(body.get("d_model", 16)), int(body.get("d_ff", 64))
    activation = str(body.get("activation", "relu"))
    tokens = int(body.get("num_tokens") or len(body.get("tokens") or [0]) or 1)
    flops = limits.ffn_flops(d_model, d_ff, activation, bool(body.get("bias", True)), tokens)
    read = limits.weight_bytes(d_model, d_ff, activation)
    return max(flops / (gflops * 1e9), read / (gbs * 1e9)) * 1000


def step_bound_ms(mix: list[dict[str, Any]], gflops: float, gbs: float, cores: int) -> float:
    """The server's least time for one step's requests: their FFN passes at the machine's
    limits, spread over `cores`."""
    total = 0.0
    for item in mix:
        body = item.get("body")
        if isinstance(body, dict):
            total += MIX_PASSES.get(str(item["path"]), 0) * _pass_ms(body, gflops, gbs)
    return total / max(1, cores)


def page_rows(
    base: str, presets: list[str], steps: int, gflops: float, gbs: float, cores: int
) -> tuple[list[dict[str, Any]], dict[str, StepResult]]:
    """Rows for visible plots redrawn, last request done and bytes per step, per preset."""
    found = measure_steps(base, {p: PAGE_PRESETS[p] for p in presets}, steps)
    rows: list[dict[str, Any]] = []
    for name, result in found.items():
        visible = result.p50(result.visible_ms)
        last = result.p50(result.last_request_ms) / 1000
        step_bytes = result.p50(result.bytes_per_step)
        charts = _visible_charts(result)
        floor = max(FRAME_MS, charts * result.plotly_floor_ms)
        compute = step_bound_ms(result.mix, gflops, gbs, cores)
        rows.append(
            row(
                f"{name}: visible plots redrawn p50 ({result.p50(result.requests_per_step):.0f} "
                "requests per step)",
                f"{visible:.0f} ms",
                f"<= {VISIBLE_TARGET_MS.get(name, 250)} ms",
                visible <= VISIBLE_TARGET_MS.get(name, 250),
                f">= {floor:.0f} ms (1 frame, {charts} visible charts x Plotly.react floor "
                f"{result.plotly_floor_ms:.1f} ms)",
            )
        )
        rows.append(
            row(
                f"{name}: the step's last request done p50",
                f"{last:.2f} s",
                f"<= {LAST_TARGET_S.get(name, 1.0)} s",
                last <= LAST_TARGET_S.get(name, 1.0),
                f">= {compute / 1000:.3f} s (the step's FFN passes at peak/bandwidth on "
                f"{cores} cores)",
            )
        )
        rows.append(
            row(
                f"{name}: bytes per step p50",
                f"{step_bytes / MB:.3f} MB",
                "<= 1 MB",
                step_bytes <= MB,
                "— (the answers' bodies, Resource Timing)",
            )
        )
    return rows, found


def _visible_charts(result: StepResult) -> int:
    return max(1, round(sum(result.charts_visible) / max(1, len(result.charts_visible))))


def route_ms_median(base: str, body: dict[str, Any], count: int = 60) -> float:
    """Median of the route's own work per /api/forward request (the Server-Timing phases:
    weights, forward, analysis, encoding), a new input_seed each time, in ms."""
    spent = []
    with httpx.Client(base_url=base, timeout=60, headers={"cache-control": "no-cache"}) as http:
        for seed in range(count):
            response = http.post("/api/forward", json={**body, "input_seed": 777_000 + seed})
            response.raise_for_status()
            phases = response.headers["server-timing"].split(",")
            spent.append(sum(float(p.split(";dur=")[1]) for p in phases))
    return statistics.median(spent[count // 4 :])  # past the first quarter: warm


def wrk_rows(
    s_body: dict[str, Any], seconds: float, connections: int
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """wrk against /api/forward at S (one body repeated, and a new body each request),
    /api/health, the trivial app and nginx's fixed answer, all in this run, alternating so
    background load drifts over them alike. FFN Lab runs as it ships (answers to repeated
    requests kept), in a server of its own."""
    proc, base = start_server()
    try:
        return _wrk_rows(base, s_body, seconds, connections)
    finally:
        stop_server(proc)


def _wrk_rows(
    base: str, s_body: dict[str, Any], seconds: float, connections: int
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    raw: dict[str, float] = {}
    with wrk.trivial_server() as trivial, nginx.Nginx() as proxy:
        targets: dict[str, tuple[str, str, Any, str | None]] = {
            "trivial": (f"{trivial}/", "GET", None, None),
            "forward_S": (f"{base}/api/forward", "POST", s_body, None),
            "forward_S_new": (f"{base}/api/forward", "POST", s_body, "input_seed"),
            "health": (f"{base}/api/health", "GET", None, None),
            "nginx_fixed": (f"{proxy.base}/__nginx_ok", "GET", None, None),
        }
        for url, method, body, vary in targets.values():  # warm-up
            wrk.run_wrk(
                url, seconds=1, connections=connections, method=method, body=body, vary=vary
            )
        sums = {k: [0, 0.0, 0] for k in targets}
        for _ in range(2):
            for key, (url, method, body, vary) in targets.items():
                r = wrk.run_wrk(
                    url,
                    seconds=seconds / 2,
                    connections=connections,
                    method=method,
                    body=body,
                    vary=vary,
                )
                sums[key][0] += r.requests
                sums[key][1] += r.seconds
                sums[key][2] += r.errors
    raw["route_ms_S"] = route_ms_median(base, s_body)
    rps = {k: v[0] / v[1] if v[1] else 0.0 for k, v in sums.items()}
    errors = sum(int(v[2]) for v in sums.values())
    raw |= {f"wrk_rps_{k}": v for k, v in rps.items()} | {"wrk_errors": errors}
    ratio = rps["forward_S"] / rps["trivial"] if rps["trivial"] else 0.0
    ratio_new = rps["forward_S_new"] / rps["trivial"] if rps["trivial"] else 0.0
    trivial_ms = 1000 / rps["trivial"] if rps["trivial"] else float("nan")
    route_ms = raw["route_ms_S"]
    bound_new = trivial_ms / (trivial_ms + route_ms)
    ceiling = rps["nginx_fixed"] / rps["trivial"] if rps["trivial"] else 0.0
    flag = f"-t1 -c{connections}"
    rows = [
        row(
            f"wrk {flag}: /api/forward S, one body repeated (answered from memory) ÷ trivial "
            f"FastAPI ({rps['forward_S']:.0f} / {rps['trivial']:.0f} req/s, {errors} errors)",
            f"{ratio:.2f}",
            ">= 0.5",
            ratio >= 0.5,
            "none below 1: a hit skips FastAPI's routing and validation, which the trivial "
            "app runs",
        ),
        row(
            f"wrk {flag}: /api/forward S, a new input_seed each request (computed) ÷ trivial "
            f"FastAPI ({rps['forward_S_new']:.0f} req/s)",
            f"{ratio_new:.2f}",
            ">= 0.5",
            ratio_new >= 0.5,
            f"<= {bound_new:.2f} (the route's own {route_ms:.2f} ms per request, from "
            f"Server-Timing, on one event loop, over the trivial app's {trivial_ms:.2f} ms)",
        ),
        row(
            f"wrk {flag}: /api/health ÷ trivial FastAPI ({rps['health']:.0f} req/s)",
            f"{rps['health'] / rps['trivial'] if rps['trivial'] else 0:.2f}",
            "—",
            None,
            "<= 1",
        ),
        row(
            f"wrk's ceiling: nginx fixed answer ÷ trivial FastAPI ({rps['nginx_fixed']:.0f} req/s)",
            f"{ceiling:.1f}x",
            ">= 5x",
            ceiling >= 5,
            "wrk and nginx share the machine's cores with the server",
        ),
    ]
    return rows, raw


def class_rows(
    base: str, mix: list[dict[str, Any]], students: int, period: float, seconds: float
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The class on a new process that computes every request (its steps go back and forth
    between two values of T: kept answers would serve nearly all of them), then through
    nginx and two new such processes, then on the running server `base` as it ships
    (repeated requests answered from memory)."""
    raw: dict[str, Any] = {}
    ceiling = classroom.client_ceiling(mix, students)
    need = students * len(mix) / period
    proc, computing = start_server(COMPUTED)
    try:
        classroom.warm(computing, mix)
        one = classroom.run_class(computing, mix, students, period, seconds)
    finally:
        stop_server(proc)
    raw["class_one_process"] = one.__dict__ | {"client_ceiling_rps": ceiling}
    rows = [
        row(
            f"{students} students, a step every {period:g} s, {seconds:g} s, 1 process: p95 "
            f"step (p50 {one.p50_ms:.0f}, p99 {one.p99_ms:.0f} ms; {one.steps_per_s:.1f} "
            f"steps/s; {one.errors} errors)",
            f"{one.p95_ms:.0f} ms",
            "<= 250 ms, 0 errors",
            one.p95_ms <= 250 and one.errors == 0,
            f"client ceiling {ceiling:.0f} req/s vs {need:.0f} req/s asked; "
            f"{len(mix)} requests per step",
        )
    ]
    if nginx.available():
        procs = [start_server(COMPUTED), start_server(COMPUTED)]
        try:
            bases = [b for _, b in procs]
            with nginx.Nginx(bases) as proxy:
                for b in bases:
                    classroom.warm(b, mix)
                compared, differed = classroom.identical_through_either(bases, proxy.base, mix)
                two = classroom.run_class(proxy.base, mix, students, period, seconds)
        finally:
            for proc, _ in procs:
                stop_server(proc)
        raw["class_nginx_2_processes"] = two.__dict__ | {
            "compared": compared,
            "differed": differed,
        }
        rows.append(
            row(
                f"the same through nginx, 2 processes: p95 step (p50 {two.p50_ms:.0f}, p99 "
                f"{two.p99_ms:.0f} ms; {two.steps_per_s:.1f} steps/s; {two.errors} errors)",
                f"{two.p95_ms:.0f} ms",
                "<= 250 ms, 0 errors",
                two.p95_ms <= 250 and two.errors == 0,
                f"answers byte-identical through either process: {compared - differed} of "
                f"{compared}",
            )
        )
    classroom.warm(base, mix)
    kept = classroom.run_class(base, mix, students, period, seconds)
    raw["class_answers_kept"] = kept.__dict__
    rows.append(
        row(
            f"the same class, 1 process as shipped (repeated steps answered from memory): p95 "
            f"step (p50 {kept.p50_ms:.0f}, p99 {kept.p99_ms:.0f} ms; {kept.errors} errors)",
            f"{kept.p95_ms:.0f} ms",
            "—",
            None,
            "every student steps between the same two bodies: an upper bound on what kept "
            "answers save",
        )
    )
    return rows, raw
