"""Time the teaching endpoints through the real app (TestClient), median of a few calls.

Run from the checkout (so its `app` is imported):

    /work/main/.venv/bin/python -m benchmarks.bench_teaching [--repeat N]
    /work/main/.venv/bin/python -m benchmarks.bench_teaching --preset llama-7b --tokens 8
    /work/main/.venv/bin/python -m benchmarks.bench_teaching --preset llama-7b --profile

Each endpoint is called once to warm the weight cache, then `--repeat` times; the median
wall time per call (request in, answer bytes out) and the answer's size are printed.
`--profile` adds the top functions by cumulative time of one warm call (cProfile), to see
what dominates. The bound printed per endpoint is its forward passes' FLOPs at the
`torch.matmul` rate measured at the start of the run (and the weight read for passes
at memory bandwidth), i.e. what the passes it makes cost at best.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from fastapi.testclient import TestClient

from app.config import Settings, get_settings
from app.main import create_app
from app.model.presets import get_preset
from app.services.compute import apply_torch_threads
from app.services.weight_cache import WeightCache
from benchmarks import limits

CONFIGS: dict[str, dict[str, Any]] = {
    "16/64 T=6": {"d_model": 16, "d_ff": 64, "num_tokens": 6},
    "512/2048 T=16 (Transformer base)": {"d_model": 512, "d_ff": 2048, "num_tokens": 16},
}
ENDPOINTS: dict[str, dict[str, Any]] = {
    "/api/attention-vs-ffn": {"position": 1, "scale": 1.0, "num_heads": 8},
    "/api/block": {"norm": "pre"},
    "/api/variants": {},
    "/api/budget": {},
    "/api/conv1d-check": {},
    "/api/dropout": {"dropout": 0.1},
    "/api/misconceptions": {"position": 1},
}
# Forward passes of the FFN each endpoint needs at least (its own definition): attention-vs-ffn
# two (before/after; the influence map adds T when it fits its FLOP limit), block one,
# variants one per variant (six), dropout three (train, other seed, eval; the reference is
# eval again), misconceptions: base, additivity (x+b, b, 0), nudge, the T ladder and the
# T rows one by one.
PASSES = {
    "/api/attention-vs-ffn": 2,
    "/api/block": 1,
    "/api/variants": 6,
    "/api/budget": 0,
    "/api/conv1d-check": 2,
    "/api/dropout": 3,
    "/api/misconceptions": 5,
}


def preset_config(preset_id: str, tokens: int) -> dict[str, Any]:
    """The request body of a preset from app/model/presets.py at T = `tokens`."""
    p = get_preset(preset_id)
    return {
        "d_model": p.d_model,
        "d_ff": p.d_ff,
        "activation": p.activation,
        "bias": p.bias,
        "num_tokens": tokens,
    }


def _runners() -> dict[str, Callable[[dict[str, Any], WeightCache, Settings], Any]]:
    """The runner function behind each endpoint, called with a validated body (no HTTP):
    the routes run them in worker threads, which a profiler in this thread would not see."""
    from app.api.schemas import teaching as st
    from app.lab import block as runner_block
    from app.lab import contrast as runner_contrast

    return {
        "/api/attention-vs-ffn": lambda b, c, s: runner_contrast.attention_vs_ffn(
            st.AttentionVsFFNRequest(**b).spec(), c, s
        ),
        "/api/block": lambda b, c, s: runner_block.block(st.BlockRequest(**b).spec(), c, s),
        "/api/variants": lambda b, c, s: runner_block.variants(
            st.VariantsRequest(**b).spec(), c, s
        ),
        "/api/budget": lambda b, c, s: runner_block.budget(st.BudgetRequest(**b).spec(), s),
        "/api/conv1d-check": lambda b, c, s: runner_block.conv1d_check(
            st.SeededForwardRequest(**b).spec(), c
        ),
        "/api/dropout": lambda b, c, s: runner_block.dropout(st.DropoutRequest(**b).spec(), c, s),
        "/api/misconceptions": lambda b, c, s: runner_contrast.misconceptions(
            st.SeededPerturbRequest(**b).spec(), c, s
        ),
    }


def profile_call(cache: WeightCache, url: str, body: dict[str, Any], top: int = 14) -> str:
    """cProfile of one warm run of the endpoint's runner in this thread: the `top`
    functions by total time spent in them (self time)."""
    call = _runners()[url]
    settings = get_settings()
    threads = torch.get_num_threads()
    apply_torch_threads(settings.torch_threads)  # as in the server's worker threads
    call(body, cache, settings)  # warm
    profiler = cProfile.Profile()
    profiler.enable()
    call(body, cache, settings)
    profiler.disable()
    torch.set_num_threads(threads)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--preset", help="a preset id (e.g. llama-7b) instead of the two sizes")
    parser.add_argument("--tokens", type=int, default=8, help="T with --preset")
    parser.add_argument("--profile", action="store_true", help="cProfile one warm call each")
    parser.add_argument("--only", help="comma-separated endpoints (e.g. /api/variants)")
    args = parser.parse_args(argv)
    configs = CONFIGS
    if args.preset:
        configs = {f"{args.preset} T={args.tokens}": preset_config(args.preset, args.tokens)}
    endpoints = ENDPOINTS
    if args.only:
        endpoints = {u: ENDPOINTS[u] for u in args.only.split(",")}
    gflops = limits.matmul_gflops()
    bandwidth = limits.read_bandwidth_gbs()
    print(f"torch.matmul {gflops:.1f} GFLOP/s, memory read {bandwidth:.1f} GB/s")
    with TestClient(create_app(Settings(answer_cache_bytes=0))) as client:
        for label, base in configs.items():
            print(f"## {label}")
            activation = base.get("activation", "relu")
            bias = base.get("bias", True)
            flops = limits.ffn_flops(
                base["d_model"], base["d_ff"], activation, bias, base["num_tokens"]
            )
            read = limits.weight_bytes(base["d_model"], base["d_ff"], activation)
            one_pass = max(flops / (gflops * 1e9), read / (bandwidth * 1e9))
            for url, extra in endpoints.items():
                body = {**base, **extra}
                if body["d_model"] % body.get("num_heads", 1):
                    body["num_heads"] = 1
                t0 = time.perf_counter()
                client.post(url, json=body).raise_for_status()  # warm the weight cache
                first = time.perf_counter() - t0
                times = []
                size = 0
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    response = client.post(url, json=body)
                    response.raise_for_status()
                    times.append(time.perf_counter() - start)
                    size = len(response.content)
                bound = PASSES[url] * one_pass
                print(
                    f"{url:24s} median {statistics.median(times) * 1000:8.1f} ms  "
                    f"(first {first * 1000:7.0f} ms)  {size / 1e6:7.3f} MB  "
                    f"bound >= {bound * 1000:6.1f} ms ({PASSES[url]} passes)"
                )
                if args.profile:
                    print(profile_call(client.app.state.weight_cache, url, body))  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
