"""Server RSS after random requests, under several environments in one run.

The same sequence as `benchmarks.run`'s RSS row (LLaMA-7B's FFN warm, then `--requests`
random valid /api/forward bodies over the page's ladders, 2 connections, RSS sampled every
50 ms for the peak) against one fresh server per variant, one after the other:

    python -m benchmarks.bench_memory                       # the defaults
    python -m benchmarks.bench_memory --variant MALLOC_ARENA_MAX=2 --variant FFN_LAB_X=1,Y=2

Each variant is a comma-separated list of environment assignments for the server ("" = the
defaults). Printed per variant: idle RSS, after the LLaMA-7B forward, peak, after the
random requests, the weight cache's bytes, and the load average.
"""

from __future__ import annotations

import argparse

import httpx

from app.config import Settings
from benchmarks.run import load_average, random_bodies
from benchmarks.server import FRESH, Server, forward_churn

GB = 1024**3
LLAMA = {"d_model": 4096, "d_ff": 11008, "activation": "swiglu", "bias": False, "num_tokens": 8}


def measure(env: dict[str, str], requests: int, seconds: float) -> dict[str, float]:
    """RSS figures (GB) of one fresh server with `env`."""
    settings = Settings()
    bodies = random_bodies(requests, settings, 10**12)
    with (
        Server(env=env or None, keep_answers=True) as server,
        httpx.Client(base_url=server.base, timeout=300, headers=FRESH) as http,
    ):
        idle = server.rss()
        for _ in range(3):
            http.post("/api/forward", json=LLAMA).raise_for_status()
        after_llama = server.rss()
        peak = [after_llama]
        churn = forward_churn(server, bodies, seconds, peak)
        after = server.rss()
    return {
        "idle": idle / GB,
        "after_llama": after_llama / GB,
        "peak": max(peak) / GB,
        "after": after / GB,
        "requests": churn.requests,
        "errors": churn.errors,
    }


def parse(variant: str) -> dict[str, str]:
    pairs = [p for p in variant.split(",") if p.strip()]
    return dict(p.split("=", 1) for p in pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=None)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=300.0)
    args = parser.parse_args(argv)
    for variant in args.variant or [""]:
        start = load_average()
        r = measure(parse(variant), args.requests, args.seconds)
        print(
            f"{variant or 'defaults':60s} idle {r['idle']:.2f} | LLaMA warm {r['after_llama']:.2f}"
            f" | peak {r['peak']:.2f} | after {r['requests']:.0f} random ({r['errors']:.0f} "
            f"errors) {r['after']:.2f} GB | load {start} -> {load_average()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
