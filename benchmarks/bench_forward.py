"""LLaMA-7B warm /api/forward, taken apart: where do the milliseconds go?

In one run, with the same tensors (d_model 4096, d_ff 11008, SwiGLU, no biases, T 8,
float32), median of `--repeat` calls, for 1 and 2 torch threads:

- the bounds: weight bytes / memory read bandwidth, FLOPs / peak `torch.matmul`;
- bare torch: the three GEMMs alone, with the weight as `nn.Linear` stores it ([out, in],
  `F.linear`), contiguous in the paper's [in, out] (`x @ w`), and through oneDNN's linear
  on weights reordered into its blocked layout (a second copy; not bit-identical);
- oneDNN's linear on the dense [out, in] weights as they are (`app.model.parallel.kernel`:
  what the model runs for big maps; no copy);
- the model: `PositionwiseFeedForward.trace` on weights of either layout;
- the server's path without HTTP: `forward_answer` (cache lookup, trace, sparsity,
  histogram, display summary) and its orjson encoding;
- `model.trace` with the big maps split over two threads (`app.model.parallel`) or not,
  alternated call by call;
- the real server: POST /api/forward warm p50 and its Server-Timing split.

    python -m benchmarks.bench_forward [--repeat 15] [--no-server]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx
import torch
import torch.nn.functional as F

from app.api.encoding import json_response
from app.api.schemas.forward import ForwardRequest
from app.config import Settings
from app.lab.forward import forward_answer
from app.model import parallel
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.services.weight_cache import WeightCache
from benchmarks import limits
from benchmarks.server import Server

D_MODEL, D_FF, T = 4096, 11008, 8
BODY = {"d_model": D_MODEL, "d_ff": D_FF, "activation": "swiglu", "bias": False, "num_tokens": T}


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def measure_in_process(repeat: int) -> list[tuple[str, float]]:
    """Rows (label, ms) for the current torch thread count."""
    rows: list[tuple[str, float]] = []
    x = torch.randn(T, D_MODEL, generator=torch.Generator().manual_seed(0))
    seeded = FFNWeights.seeded(D_MODEL, D_FF, 0, gated=True, bias=False)  # [in, out] views
    out_in = [seeded.w_gate, seeded.w1, seeded.w2]  # of [out, in] storage (nn.Linear's)
    in_out = [w.contiguous() for w in out_in]  # type: ignore[union-attr]
    with torch.inference_mode():

        def gemms_linear() -> None:
            h = F.silu(F.linear(x, out_in[0].T)) * F.linear(x, out_in[1].T)  # type: ignore[union-attr]
            F.linear(h, out_in[2].T)  # type: ignore[union-attr]

        def gemms_paper() -> None:
            h = F.silu(x @ in_out[0]) * (x @ in_out[1])
            h @ in_out[2]

        rows.append(
            ("bare 3 GEMMs, weights [out, in] (nn.Linear layout)", median_ms(gemms_linear, repeat))
        )
        rows.append(("bare 3 GEMMs, weights contiguous [in, out]", median_ms(gemms_paper, repeat)))
        rows.append(onednn_row(x, in_out, gemms_paper, repeat))

        def gemms_dense_onednn() -> None:  # what the model runs: no copy, no re-layout
            h = F.silu(parallel.kernel(x, out_in[0].T, None)) * parallel.kernel(  # type: ignore[union-attr]
                x,
                out_in[1].T,  # type: ignore[union-attr]
                None,
            )
            parallel.kernel(h, out_in[2].T, None)  # type: ignore[union-attr]

        rows.append(
            (
                "bare 3 GEMMs, oneDNN on the dense [out, in] weights (no copy)",
                median_ms(gemms_dense_onednn, repeat),
            )
        )
        config = FFNConfig(D_MODEL, D_FF, "swiglu", bias=False)
        old = PositionwiseFeedForward(config, seeded).eval()
        rows.append(
            ("model.trace, weights [out, in] (oneDNN)", median_ms(lambda: old.trace(x), repeat))
        )
        paper = PositionwiseFeedForward(
            config, FFNWeights(w1=in_out[1], b1=None, w2=in_out[2], b2=None, w_gate=in_out[0])
        ).eval()
        rows.append(
            (
                "model.trace, weights contiguous [in, out] (sgemm)",
                median_ms(lambda: paper.trace(x), repeat),
            )
        )
    with torch.no_grad():
        cache = WeightCache(10**9)
        model = cache.model(config, 0)
        rows.append(
            (
                "model.trace under no_grad, the cache's layout",
                median_ms(lambda: model.trace(x), repeat),
            )
        )
    with torch.inference_mode():
        rows.append(
            (
                "model.trace under inference_mode, the cache's layout",
                median_ms(lambda: model.trace(x), repeat),
            )
        )
    settings = Settings()
    req = ForwardRequest(**BODY)
    rows.append(
        (
            "forward_answer (cache hit, trace, statistics, summary)",
            median_ms(lambda: forward_answer(req, cache, settings), repeat),
        )
    )
    content = forward_answer(req, cache, settings)
    rows.append(
        ("orjson encoding of the answer", median_ms(lambda: json_response(content), repeat))
    )
    return rows


def onednn_row(
    x: torch.Tensor, in_out: list[torch.Tensor], paper: Callable[[], Any], repeat: int
) -> tuple[str, float]:
    """The same 3 GEMMs through oneDNN's linear with weights reordered into its blocked
    layout (`torch.utils.mkldnn.to_mkldnn`): a second copy of every weight, and other
    summation orders, so the label gives the max |difference| from the [in, out] sgemm."""
    from torch.utils import mkldnn

    lins = []
    for w in in_out:
        lin = torch.nn.Linear(w.shape[0], w.shape[1], bias=False)
        lin.weight = torch.nn.Parameter(w.T.contiguous(), requires_grad=False)
        lins.append(mkldnn.to_mkldnn(lin))  # type: ignore[no-untyped-call]

    def gemms() -> torch.Tensor:
        h = F.silu(lins[0](x)) * lins[1](x)
        return lins[2](h)  # type: ignore[no-any-return]

    with torch.no_grad():
        ms = median_ms(gemms, repeat)
        h = F.silu(x @ in_out[0]) * (x @ in_out[1])
        diff = float((gemms() - h @ in_out[2]).abs().max())
    return (f"bare 3 GEMMs, oneDNN prepacked (2nd copy; max |diff| {diff:.1e})", ms)


def measure_split(repeat: int) -> list[tuple[str, float]]:
    """`model.trace` with its big maps on one thread and split over the pool
    (`app.model.parallel`), alternated call by call so that background load hits both alike;
    checks that both give the same numbers bit for bit."""
    cache = WeightCache(10**9)
    model = cache.model(FFNConfig(D_MODEL, D_FF, "swiglu", bias=False), 0)
    x = torch.randn(T, D_MODEL, generator=torch.Generator().manual_seed(0))
    times: dict[int, list[float]] = {1: [], 2: []}
    before = parallel.workers()
    outputs: dict[int, torch.Tensor] = {}
    with torch.inference_mode():
        for _ in range(repeat + 1):
            for workers in (1, 2):
                parallel.set_workers(workers)
                t0 = time.perf_counter()
                outputs[workers] = model.trace(x).output
                times[workers].append(time.perf_counter() - t0)
    parallel.set_workers(before)
    same = "bit-identical" if torch.equal(outputs[1], outputs[2]) else "DIFFERENT"
    return [
        (f"model.trace, matmul workers {w} (alternated; {same})", statistics.median(v[1:]) * 1000)
        for w, v in times.items()
    ]


def measure_server(repeat: int, threads: int) -> tuple[float, dict[str, float]]:
    """Warm POST /api/forward p50 (ms) on a real server with FFN_LAB_TORCH_THREADS."""
    env = {"FFN_LAB_TORCH_THREADS": str(threads)}
    with Server(env=env) as server, httpx.Client(base_url=server.base, timeout=120) as http:
        http.post("/api/forward", json=BODY).raise_for_status()
        times: list[float] = []
        parts: dict[str, list[float]] = {}
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = http.post("/api/forward", json=BODY)
            times.append(time.perf_counter() - t0)
            for part in r.headers["server-timing"].split(","):
                name, dur = part.strip().split(";dur=")
                parts.setdefault(name, []).append(float(dur))
    return statistics.median(times) * 1000, {k: statistics.median(v) for k, v in parts.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-server", action="store_true")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    weight_bytes = limits.weight_bytes(D_MODEL, D_FF, "swiglu")
    flops = limits.ffn_flops(D_MODEL, D_FF, "swiglu", False, T)
    for threads in args.threads:
        torch.set_num_threads(threads)
        gflops = limits.matmul_gflops()
        gbs = limits.read_bandwidth_gbs()
        print(
            f"## torch threads {threads}: matmul {gflops:.1f} GFLOP/s, read {gbs:.1f} GB/s -> "
            f"bound max(weight read {weight_bytes / gbs / 1e6:.1f} ms, FLOPs "
            f"{flops / gflops / 1e6:.1f} ms)"
        )
        rows = measure_in_process(args.repeat) + (
            measure_split(args.repeat) if threads == 1 else []
        )
        for label, value in rows:
            print(f"{label:58s} {value:8.1f} ms")
        if not args.no_server:
            p50, parts = measure_server(args.repeat, threads)
            split = ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
            print(f"{'server POST /api/forward warm p50':58s} {p50:8.1f} ms  ({split})")


if __name__ == "__main__":
    main()
