"""FFN Lab benchmark: one command, one server, one table of ratios next to physical limits.

    python -m benchmarks.run            # full run (a few minutes on 2 cores)
    python -m benchmarks.run --quick    # tiny settings: checks that everything runs

A full run overwrites benchmarks/results/latest.json and latest.md (the table the
documentation's performance page includes); --quick and --page write there only when given
--out.

Starts its own server on a free loopback port, drives it with a bounded asyncio client and
headless Chromium, and prints: metric, measured, target, pass/fail, bound. The bound is what
physics allows on this machine: forward FLOPs / torch.matmul GFLOP/s measured in this run
(and weight bytes / memory bandwidth where reading the weights dominates); one frame is
16.7 ms for anything painted. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import torch

from app.config import Settings
from app.model.activations import ACTIVATIONS
from app.model.ffn import FFNConfig, expected_shapes
from app.model.presets import PRESETS
from benchmarks import classroom, limits, live, report, wrk
from benchmarks.browser import chromium_available
from benchmarks.client import LoadResult, load, percentile
from benchmarks.server import FRESH, Server, forward_churn
from tests.serverproc import ROOT

MB = 1_000_000


@dataclass(frozen=True)
class Size:
    """A named benchmark size: T tokens, d_model -> d_ff, ReLU with biases."""

    tokens: int
    d_model: int
    d_ff: int
    activation: str = "relu"
    bias: bool = True

    def body(self, **extra: Any) -> dict[str, Any]:
        """The /api/forward request body for this size (seeded weights and tokens)."""
        return {
            "d_model": self.d_model,
            "d_ff": self.d_ff,
            "activation": self.activation,
            "bias": self.bias,
            "num_tokens": self.tokens,
            "seed": 0,
            "input_seed": 0,
            **extra,
        }

    def flops(self) -> int:
        """FLOPs of one forward pass."""
        return limits.ffn_flops(self.d_model, self.d_ff, self.activation, self.bias, self.tokens)


@dataclass(frozen=True)
class Plan:
    """How much to measure: the full run or the tiny `--quick` one."""

    sizes: dict[str, Size]
    big: Size
    rps_seconds: float
    rps_count: int
    concurrency: int
    latency_count: int
    random_requests: int
    random_seconds: float
    random_max_params: int
    size_tokens: tuple[int, ...]
    size_max_params: int
    page_presets: tuple[str, ...] = ("default", "transformer-base", "bert-base", "llama-7b")
    page_steps: int = 10
    wrk_seconds: float = 4.0
    wrk_connections: int = 8
    class_students: int = 50
    class_period: float = 2.0
    class_seconds: float = 60.0


FULL = Plan(
    sizes={"S": Size(8, 64, 256), "M": Size(16, 512, 2048), "L": Size(32, 1024, 4096)},
    big=Size(8, 4096, 11008, "swiglu", False),
    rps_seconds=8.0,
    rps_count=80_000,
    concurrency=8,
    latency_count=60,
    random_requests=200,
    random_seconds=300.0,
    random_max_params=10**12,
    size_tokens=(8, 32, 64),
    size_max_params=10**12,
)
QUICK = Plan(
    sizes={"S": Size(2, 8, 16), "M": Size(3, 8, 32), "L": Size(4, 16, 64)},
    big=Size(2, 16, 32, "swiglu", False),
    rps_seconds=0.8,
    rps_count=400,
    concurrency=2,
    latency_count=5,
    random_requests=5,
    random_seconds=20.0,
    random_max_params=50_000,
    size_tokens=(2,),
    size_max_params=5_000_000,
    page_presets=("default",),
    page_steps=2,
    wrk_seconds=1.0,
    wrk_connections=2,
    class_students=3,
    class_period=1.0,
    class_seconds=2.0,
)


@dataclass
class Row:
    """One line of the table."""

    metric: str
    measured: str
    target: str
    ok: bool | None
    bound: str


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def load_average() -> str:
    """`uptime`'s three load averages (1, 5, 15 min) on 2 cores."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def ladder(name: str) -> list[int]:
    """A slider ladder from static/js/ladders.js (the page's d_model / d_ff steps)."""
    text = (ROOT / "static" / "js" / "ladders.js").read_text(encoding="utf-8")
    found = re.search(rf"{name}\s*=\s*\[([^\]]*)\]", text)
    if not found:
        raise RuntimeError(f"{name} not found in static/js/ladders.js")
    return [int(v) for v in found.group(1).split(",") if v.strip()]


def random_bodies(
    count: int, settings: Settings, max_params: int, seed: int = 5
) -> list[dict[str, Any]]:
    """`count` random valid /api/forward bodies over the page's ladders (seeds 0-4)."""
    rng = random.Random(seed)
    d_models = [d for d in ladder("D_MODEL_STEPS") if d <= settings.max_d_model]
    d_ffs = [d for d in ladder("D_FF_STEPS") if d <= settings.max_d_ff]
    bodies: list[dict[str, Any]] = []
    while len(bodies) < count:
        activation = rng.choice(list(ACTIVATIONS))
        bias = rng.random() < 0.5
        d_model, d_ff = rng.choice(d_models), rng.choice(d_ffs)
        config = FFNConfig(d_model, d_ff, activation, bias)
        params = sum(math.prod(shape) for shape in expected_shapes(config).values())
        if params > min(settings.max_params, max_params):
            continue
        bodies.append(
            {
                "d_model": d_model,
                "d_ff": d_ff,
                "activation": activation,
                "bias": bias,
                "num_tokens": rng.randint(1, settings.max_tokens),
                "seed": rng.randint(0, 4),
                "input_seed": rng.randint(0, 4),
            }
        )
    return bodies


def interleaved(base: str, body: dict[str, Any], plan: Plan) -> tuple[LoadResult, LoadResult]:
    """/api/health and /api/forward load in alternating short windows (after a warm-up of
    each), so that the machine's other load drifts over both alike; returns the sums."""
    windows = 8
    seconds = plan.rps_seconds / windows
    count = plan.rps_count // windows

    def one(path: str) -> LoadResult:
        if path == "/api/health":
            return load(
                base, path, method="GET", concurrency=plan.concurrency, count=count, seconds=seconds
            )
        return load(
            base, path, body=body, concurrency=plan.concurrency, count=count, seconds=seconds
        )

    one("/api/health")
    one("/api/forward")
    runs: dict[str, list[LoadResult]] = {"/api/health": [], "/api/forward": []}
    for _ in range(windows):
        for path, results in runs.items():
            results.append(one(path))

    def total(results: list[LoadResult]) -> LoadResult:
        return LoadResult(
            sum(r.requests for r in results),
            sum(r.errors for r in results),
            sum(r.seconds for r in results),
            [x for r in results for x in r.latencies],
            max(r.body_bytes for r in results),
        )

    return total(runs["/api/health"]), total(runs["/api/forward"])


def latency_against_forward(client: httpx.Client, size: Size, count: int) -> dict[str, float]:
    """Sequential requests of `size`, each followed by one bare forward pass of the same
    tensors in this process (interleaved, so both see the same background load).

    Returns p50/p95 request latency, the p50 of the server's own forward time (its
    Server-Timing header: same process, same tensors), and the p50 bare forward here."""
    model, x = limits.model_and_tokens(
        size.d_model, size.d_ff, size.activation, size.bias, size.tokens
    )
    body = size.body()
    for _ in range(3):
        post_seconds(client, body)
    latencies, server, bare = [], [], []
    for _ in range(count):
        elapsed, forward = server_timed(client, body)
        latencies.append(elapsed)
        server.append(forward)
        bare.append(limits.time_forward(model, x))
    return {
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "server_forward": percentile(server, 50),
        "bare": percentile(bare, 50),
    }


def server_timed(client: httpx.Client, body: dict[str, Any]) -> tuple[float, float]:
    """(request seconds, the server's own forward seconds from Server-Timing)."""
    t0 = time.perf_counter()
    response = client.post("/api/forward", json=body)
    elapsed = time.perf_counter() - t0
    response.raise_for_status()
    timing = dict(
        part.strip().split(";dur=") for part in response.headers["server-timing"].split(",")
    )
    return elapsed, float(timing["forward"]) / 1000


def post_seconds(client: httpx.Client, body: dict[str, Any]) -> tuple[float, int]:
    """(seconds, body bytes) of one POST /api/forward; raises on a non-200 answer."""
    t0 = time.perf_counter()
    response = client.post("/api/forward", json=body)
    elapsed = time.perf_counter() - t0
    response.raise_for_status()
    return elapsed, len(response.content)


def measure(plan: Plan, with_browser: bool) -> tuple[list[Row], dict[str, Any]]:
    """Run every measurement on one server; returns the table rows and the raw figures."""
    settings = Settings()
    raw: dict[str, Any] = {
        **report.provenance(),
        "load_average_start": load_average(),
        "cpus": os.cpu_count(),
    }
    if settings.torch_threads:
        torch.set_num_threads(settings.torch_threads)  # the limits of the server's setting
    raw["torch_threads"] = torch.get_num_threads()
    gflops = limits.matmul_gflops()
    bandwidth = limits.read_bandwidth_gbs()
    raw |= {"matmul_gflops": gflops, "read_gbs": bandwidth}
    rows: list[Row] = []

    def flops_ms(size: Size) -> float:
        return size.flops() / (gflops * 1e9)

    with Server(keep_answers=True) as server:  # as shipped: RSS includes the answers kept
        raw["rss_idle"] = server.rss()
        client = httpx.Client(base_url=server.base, timeout=120, headers=FRESH)

        # 1. The big gated preset: cold (empty cache) first, then warm.
        big = plan.big
        cold, _ = post_seconds(client, big.body())
        warm_runs = [server_timed(client, big.body()) for _ in range(7)]
        warm = percentile([w[0] for w in warm_runs], 50)
        warm_forward = percentile([w[1] for w in warm_runs], 50)
        big_bytes = limits.weight_bytes(big.d_model, big.d_ff, big.activation)
        read_s = big_bytes / (bandwidth * 1e9)
        limits.model_and_tokens(2, 2, big.activation, big.bias, 1)  # first-call costs
        t0 = time.perf_counter()
        model, x = limits.model_and_tokens(
            big.d_model, big.d_ff, big.activation, big.bias, big.tokens
        )
        seeded_s = time.perf_counter() - t0
        bare = percentile([limits.time_forward(model, x) for _ in range(7)], 50)
        del model, x
        shape_gflops = big.flops() / bare / 1e9
        label = f"{big.d_model}->{big.d_ff} {big.activation} T={big.tokens}"
        rows.append(
            Row(
                f"preset {label}: cold",
                ms(cold),
                "<= 2000 ms",
                cold <= 2.0,
                f">= {ms(seeded_s + bare)} (seeded init of {big_bytes / MB:.0f} MB here "
                f"{ms(seeded_s)}, bare forward {ms(bare)})",
            )
        )
        rows.append(
            Row(
                f"preset {label}: warm p50 (forward in the server {ms(warm_forward)})",
                ms(warm),
                "<= 50 ms",
                warm <= 0.050,
                f">= {ms(max(flops_ms(big), read_s))} (FLOPs at peak {ms(flops_ms(big))}, "
                f"weight read {ms(read_s)}); bare forward here {ms(bare)}: its matmuls at "
                f"M={big.tokens} run {shape_gflops:.0f} GFLOP/s",
            )
        )
        raw |= {
            "big_cold_s": cold,
            "big_warm_s": warm,
            "big_warm_server_forward_s": warm_forward,
            "big_seeded_here_s": seeded_s,
            "big_bare_forward_s": bare,
        }

        # 2. Requests/s by wrk: /api/forward at S against the benchmark's own trivial app
        #    (and wrk's own ceiling); without wrk, the asyncio client against /api/health.
        s = plan.sizes["S"]
        if wrk.available():
            found, wrk_raw = live.wrk_rows(s.body(), plan.wrk_seconds, plan.wrk_connections)
            rows += [Row(**r) for r in found]
            raw |= wrk_raw
            raw["errors"] = wrk_raw["wrk_errors"]
        else:
            health, forward = interleaved(server.base, s.body(), plan)
            ratio = forward.rps / health.rps if health.rps else 0.0
            per_health = 1.0 / health.rps if health.rps else float("nan")
            best = per_health / (per_health + flops_ms(s) / 1000 / 2)  # 2 cores share the compute
            rows.append(
                Row(
                    f"rps /api/forward ÷ /api/health at S ({forward.rps:.0f} / {health.rps:.0f})",
                    f"{ratio:.2f}",
                    ">= 0.5",
                    ratio >= 0.5,
                    f"<= {best:.3f} (S forward {flops_ms(s) * 1000:.1f} µs of FLOPs)",
                )
            )
            raw |= {
                "rps_health": health.rps,
                "rps_forward_S": forward.rps,
                "errors": health.errors + forward.errors,
            }

        # 3. Request latency at L against the bare forward pass of the same tensors.
        big_l = plan.sizes["L"]
        latency = latency_against_forward(client, big_l, plan.latency_count)
        p50, server_fwd, bare = latency["p50"], latency["server_forward"], latency["bare"]
        rows.append(
            Row(
                f"latency p50 ÷ forward at L ({ms(p50)} / {ms(server_fwd)} in the server; "
                f"bare here {ms(bare)})",
                f"{p50 / server_fwd:.2f}",
                "<= 3",
                p50 / server_fwd <= 3,
                f">= 1; forward >= {ms(flops_ms(big_l))} (FLOPs)",
            )
        )
        raw |= {f"latency_L_{k}_s": v for k, v in latency.items()}

        # 4. The largest response body over every preset (and T up to max_tokens).
        largest, where = 0, ""
        for preset in PRESETS:
            params = limits.weight_bytes(preset.d_model, preset.d_ff, preset.activation) // 4
            if params > plan.size_max_params:
                continue
            if preset.weights is not None:
                bodies = [
                    {
                        "d_model": preset.d_model,
                        "d_ff": preset.d_ff,
                        "activation": preset.activation,
                        "bias": preset.bias,
                        "tokens": preset.tokens,
                        "weights": preset.weights,
                    }
                ]
            else:
                bodies = [
                    Size(t, preset.d_model, preset.d_ff, preset.activation, preset.bias).body()
                    for t in plan.size_tokens
                ]
            for body in bodies:
                _, size = post_seconds(client, body)
                if size > largest:
                    largest = size
                    where = f"{preset.id} T={body.get('num_tokens', len(preset.tokens or []))}"
        rows.append(
            Row(
                f"largest response body ({where})",
                f"{largest / MB:.3f} MB",
                "<= 1 MB",
                largest <= MB,
                "— (bytes of the summarised display tensors)",
            )
        )
        raw |= {"largest_body_bytes": largest, "largest_body_where": where}

        # 5. One Tokens step of the page as it opens, per preset (the live-page table), in
        #    headless Chromium; its request mix is then replayed by a class of students.
        mix = classroom.load_mix()
        if with_browser and chromium_available():
            cores = os.cpu_count() or 1
            found, steps = live.page_rows(
                server.base, list(plan.page_presets), plan.page_steps, gflops, bandwidth, cores
            )
            rows += [Row(**r) for r in found]
            raw["page_steps"] = {k: asdict(v) for k, v in steps.items()}
            if "default" in steps and steps["default"].mix:
                mix = steps["default"].mix
        else:
            rows.append(
                Row(
                    "page: visible plots redrawn / last request done / bytes per step",
                    "skipped",
                    "see README",
                    None,
                    "Chromium not run" if with_browser else "--no-browser",
                )
            )

        # 5b. A class at once: the default step's mix from many students, one process, then
        #     through nginx in front of two processes.
        found, class_raw = live.class_rows(
            server.base, mix, plan.class_students, plan.class_period, plan.class_seconds
        )
        rows += [Row(**r) for r in found]
        raw |= class_raw

        # 6. RSS after random valid requests (run last: it churns the weight cache).
        bodies = random_bodies(plan.random_requests, settings, plan.random_max_params)
        peak = [server.rss()]
        churn = forward_churn(server, bodies, plan.random_seconds, peak)
        rss_after = server.rss()
        gb = 1024**3
        rows.append(
            Row(
                f"RSS after {churn.requests} random requests (peak "
                f"{max(peak) / gb:.2f} GB, {churn.errors} errors)",
                f"{rss_after / gb:.2f} GB",
                "<= 1.5 GB",
                rss_after <= 1.5 * gb and churn.errors == 0,
                f"cache bound {settings.weight_cache_bytes / gb:.2f} GB + idle "
                f"{raw['rss_idle'] / gb:.2f} GB",
            )
        )
        raw |= {
            "rss_after": rss_after,
            "rss_peak": max(peak),
            "random_requests": churn.requests,
            "random_errors": churn.errors,
        }
        client.close()
    raw["load_average_end"] = load_average()
    return rows, raw


def measure_page(plan: Plan) -> tuple[list[Row], dict[str, Any]]:
    """The page's figures (benchmarks/page.py) on one server that keeps no answers (each
    step computed), then the L request ratio on the same server after the browser ran, and
    again while a headless Chromium page spins a core."""
    from benchmarks import page

    raw: dict[str, Any] = {"load_average_start": load_average(), "cpus": os.cpu_count()}
    raw["torch_threads"] = torch.get_num_threads()
    raw["matmul_gflops"] = limits.matmul_gflops()
    raw["read_gbs"] = limits.read_bandwidth_gbs()
    rows: list[Row] = []
    with Server() as server:
        if chromium_available():
            found = page.step_rows(server.base, list(plan.page_presets), plan.page_steps)
            found += page.phone_rows(server.base, plan.page_steps, 3 if plan is FULL else 1)
            found += page.drag_rows(server.base)
            rows += [Row(**r) for r in found]
        rows += [Row(**r) for r in page.l_ratio_rows(server.base, plan.latency_count // 2)]
        if chromium_available():
            with page.busy_browser():
                busy = page.l_ratio_rows(
                    server.base, plan.latency_count // 2, ", a Chromium page spinning a core"
                )
            rows += [Row(**r) for r in busy]
    raw["load_average_end"] = load_average()
    return rows, raw


def print_table(rows: list[Row], raw: dict[str, Any], quick: bool) -> None:
    """The table, with the machine's limits on top."""
    print(f"FFN Lab benchmark{' (--quick: tiny sizes, numbers not meaningful)' if quick else ''}")
    print(
        f"cpus {raw['cpus']}, torch threads {raw['torch_threads']}, "
        f"load average {raw['load_average_start']} -> "
        f"{raw['load_average_end']}; torch.matmul {raw['matmul_gflops']:.1f} GFLOP/s, "
        f"memory read {raw['read_gbs']:.1f} GB/s, 1 frame = {limits.FRAME_MS:.1f} ms"
    )
    headers = ("metric", "measured", "target", "pass", "bound")
    cells = [
        (
            r.metric,
            r.measured,
            r.target,
            "-" if r.ok is None else ("PASS" if r.ok else "FAIL"),
            r.bound,
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for c in cells:
        print(" | ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, measure, print; exit code 0 even when a target is missed."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check that it runs")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium part")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    parser.add_argument(
        "--out",
        type=Path,
        help=f"folder for latest.json and latest.md (default for a full run: {report.RESULTS})",
    )
    parser.add_argument(
        "--page",
        action="store_true",
        help="the page's figures only (benchmarks/page.py): steps per preset and size, "
        "phone, a student's bytes, the L request ratio",
    )
    args = parser.parse_args(argv)
    if args.page:
        rows, raw = measure_page(QUICK if args.quick else FULL)
    else:
        rows, raw = measure(QUICK if args.quick else FULL, with_browser=not args.no_browser)
    print_table(rows, raw, args.quick)
    result = {"rows": [asdict(r) for r in rows], "raw": raw}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    # latest.json/md hold a full run (the performance page includes them): a quick run or
    # the page's part alone writes there only when given --out
    out = args.out or (None if args.quick or args.page else report.RESULTS)
    if out is not None:
        for path in report.write_latest(result, out):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
