"""Bounded load test on loopback: N concurrent clients for D seconds, then it stops by itself.

Mixes what a class does at once: small forwards and perturbations (the page's default,
S = T8, 64->256), the literature presets (Transformer base, BERT-base, GPT-2 small,
LLaMA-7B at T=1), a few large runs (L = T32, 1024->4096) and bad inputs that must be 4xx.
Starts its own server on 127.0.0.1 (a free port) unless --url is given, and reports:
answers by status, unexpected answers (anything but the expected status of each kind),
latency p50/p99 per kind (S above all), throughput, and the server's RSS before/after.

    python -m benchmarks.load                       # 50 clients, 60 s
    python -m benchmarks.load --clients 10 --duration 5 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from benchmarks.server import COMPUTED
from tests.serverproc import rss_bytes, start_server, stop_server

S = {"d_model": 64, "d_ff": 256, "num_tokens": 8}
BIG_BODY = b'{"tokens": [' + b"0.5," * (17 * 1024 * 1024 // 4) + b"0.5]}"  # over 16 MiB

# kind -> (weight, expected status, method, url, json body or raw bytes)
MIX: dict[str, tuple[float, int, str, str, Any]] = {
    "S_forward": (40, 200, "POST", "/api/forward", {**S, "activation": "relu"}),
    "S_forward_gelu": (10, 200, "POST", "/api/forward", {**S, "activation": "gelu", "seed": 3}),
    "S_perturb": (20, 200, "POST", "/api/perturb", {**S, "position": 2, "scale": 1.5}),
    "page_presets": (3, 200, "GET", "/api/presets", None),
    "transformer_base": (4, 200, "POST", "/api/forward", {"d_model": 512, "d_ff": 2048}),
    "bert_base": (2, 200, "POST", "/api/forward",
                  {"d_model": 768, "d_ff": 3072, "activation": "gelu"}),
    "gpt2_perturb": (2, 200, "POST", "/api/perturb",
                     {"d_model": 768, "d_ff": 3072, "activation": "gelu_tanh", "position": 1}),
    "L_forward": (1, 200, "POST", "/api/forward",
                  {"d_model": 1024, "d_ff": 4096, "num_tokens": 32}),
    "llama_7b_T1": (0.3, 200, "POST", "/api/forward",
                    {"d_model": 4096, "d_ff": 11008, "activation": "swiglu", "bias": False,
                     "num_tokens": 1}),
    "bad_nan": (2, 422, "POST", "/api/forward", b'{"tokens": [[NaN]], "d_model": 1}'),
    "bad_string": (2, 422, "POST", "/api/forward", {"d_model": "sixteen"}),
    "bad_d_ff_1e9": (2, 422, "POST", "/api/forward", {"d_ff": 10**9}),
    "bad_non_json": (2, 422, "POST", "/api/forward", b"d_model=16&d_ff=64"),
    "bad_ragged": (2, 422, "POST", "/api/forward", {"d_model": 2, "tokens": [[1, 2], [3]]}),
    "bad_position": (2, 422, "POST", "/api/perturb", {**S, "position": 8}),
    "bad_activation": (2, 422, "POST", "/api/forward", {"activation": "sigmoidd"}),
    "bad_body_17MB": (0.2, 413, "POST", "/api/forward", BIG_BODY),
}  # fmt: skip


@dataclass
class Report:
    """What a load run measured (times in ms, memory in MB)."""

    clients: int
    duration_s: float
    requests: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    unexpected: dict[str, int] = field(default_factory=dict)
    transport_errors: int = 0
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    rss_before_mb: float | None = None
    rss_after_mb: float | None = None

    @property
    def unexpected_total(self) -> int:
        """Answers whose status was not the expected one, and failed connections."""
        return sum(self.unexpected.values())


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _client(
    http: httpx.AsyncClient,
    deadline: float,
    rng: random.Random,
    samples: list[Any],
    think: float = 0.0,
) -> None:
    kinds = list(MIX)
    weights = [MIX[k][0] for k in kinds]
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        _, expected, method, url, body = MIX[kind]
        kwargs: dict[str, Any] = {}
        if isinstance(body, bytes):
            kwargs = {"content": body, "headers": {"content-type": "application/json"}}
        elif body is not None:
            kwargs = {"json": body}
        t0 = time.perf_counter()
        try:
            response = await http.request(method, url, **kwargs)
            await response.aread()
            status: int | str = response.status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        samples.append((kind, expected, status, (time.perf_counter() - t0) * 1000))
        if think:
            await asyncio.sleep(rng.uniform(0, 2 * think))


async def run_load(
    base: str, clients: int, duration: float, seed: int = 0, think: float = 0.0
) -> Report:
    """Run `clients` concurrent clients against `base` for `duration` seconds.

    Each client sends its next request as soon as the last one is answered, or after a
    random pause of 0 to 2 x `think` seconds (a student reading the plot).
    """
    samples: list[Any] = []
    deadline = time.monotonic() + duration
    # Idle connections are dropped by the client before uvicorn's 5 s keep-alive timeout,
    # or a request sent on a connection the server is closing fails (a client-side race).
    limits = httpx.Limits(
        max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        await asyncio.gather(
            *(
                _client(http, deadline, random.Random(seed + i), samples, think)
                for i in range(clients)
            )
        )
    report = Report(clients=clients, duration_s=duration, requests=len(samples))
    by_status: Counter[str] = Counter()
    unexpected: Counter[str] = Counter()
    latencies: dict[str, list[float]] = defaultdict(list)
    for kind, expected, status, ms in samples:
        by_status[str(status)] += 1
        if isinstance(status, str):
            report.transport_errors += 1
            unexpected[f"{kind}:{status}"] += 1
        elif status != expected:
            unexpected[f"{kind}:{status}"] += 1
        else:
            latencies[kind].append(ms)
    report.by_status = dict(sorted(by_status.items()))
    report.unexpected = dict(unexpected)
    report.latency_ms = {
        kind: {
            "n": len(values),
            "p50": round(statistics.median(values), 1),
            "p99": round(_percentile(values, 0.99), 1),
            "max": round(max(values), 1),
        }
        for kind, values in sorted(latencies.items())
    }
    return report


def print_report(report: Report) -> None:
    print(f"{report.clients} clients for {report.duration_s:g} s: {report.requests} requests "
          f"({report.requests / report.duration_s:.1f}/s)")  # fmt: skip
    print("by status:", ", ".join(f"{k}: {v}" for k, v in report.by_status.items()))
    print(f"unexpected: {report.unexpected_total} {report.unexpected or ''}")
    print(f"{'kind':<18}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind, row in report.latency_ms.items():
        print(
            f"{kind:<18}{row['n']:>6.0f}{row['p50']:>10.1f}{row['p99']:>10.1f}{row['max']:>10.1f}"
        )
    if report.rss_before_mb is not None:
        print(
            f"server RSS: {report.rss_before_mb:.0f} MB before, {report.rss_after_mb:.0f} MB after"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds")
    parser.add_argument("--url", help="an already running server (default: start one)")
    parser.add_argument("--workers", type=int, default=1, help="workers of the started server")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--think", type=float, default=0.0, help="mean pause between requests")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    proc = None
    base = args.url
    if base is None:
        proc, base = start_server(COMPUTED, workers=args.workers)
    try:
        if proc is not None:
            # warm up: imports, plotly page data, the seeded weights of the mix
            with httpx.Client(base_url=base, timeout=120) as http:
                for _, _, method, url, body in MIX.values():
                    if body is None or isinstance(body, dict):
                        http.request(method, url, json=body)
        before = rss_bytes(proc.pid) if proc is not None else None
        report = asyncio.run(run_load(base, args.clients, args.duration, args.seed, args.think))
        if proc is not None and before is not None:
            report.rss_before_mb = before / 2**20
            report.rss_after_mb = rss_bytes(proc.pid) / 2**20
    finally:
        if proc is not None:
            stop_server(proc)
    if args.json:
        print(json.dumps({**asdict(report), "unexpected_total": report.unexpected_total}))
    else:
        print_report(report)
    return 1 if report.unexpected_total else 0


if __name__ == "__main__":
    sys.exit(main())
