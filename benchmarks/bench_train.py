"""Time-to-learn of the S configuration (d_model 16, d_ff 64, 64 pairs).

Run from the checkout (so its `app` is imported):
    /work/main/.venv/bin/python -m benchmarks.bench_train [--repeat N] [--threads 1,2] [--no-server]

Prints, as medians of N runs after one warm-up (torch's first optimiser step in a process
is slow):
  * in-process (`app.lab.learning.train`), per torch thread count (`--threads`, default 1): the
    first step at which every pair is memorised (accuracy 1.0), the wall time to that
    step, and the full run;
  * over HTTP on a real server (uvicorn, loopback): time from sending POST /api/train to
    the first NDJSON line with accuracy 1.0, and to the final line;
with the bound next to each: the run's FLOPs / this machine's single-thread matmul peak
(1024 x 1024 float32, best of 10), and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import httpx
import torch

from app.lab.learning.memory import TrainConfig, training_flops
from app.lab.learning.train import Progress, train

S = {"d_model": 16, "d_ff": 64, "num_pairs": 64, "num_classes": 4, "steps": 300, "lr": 0.03}


def peak_gflops() -> float:
    a = torch.randn(1024, 1024)
    b = torch.randn(1024, 1024)
    best = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * 1024**3 / best / 1e9


def in_process(threads: int) -> tuple[int, float, float]:
    """(first step with accuracy 1.0, seconds to it, seconds for the whole run)."""
    torch.set_num_threads(threads)
    config = TrainConfig(**S, log_every=1)
    start = time.perf_counter()
    learned_step, learned_at = -1, float("nan")
    for record in train(config):
        if isinstance(record, Progress) and record.accuracy == 1.0 and learned_step < 0:
            learned_step, learned_at = record.step, time.perf_counter() - start
    return learned_step, learned_at, time.perf_counter() - start


def over_http(base: str) -> tuple[float, float]:
    """(seconds to the first line with accuracy 1.0, seconds to the final line)."""
    start = time.perf_counter()
    learned = float("nan")
    with httpx.stream("POST", f"{base}/api/train", json={**S, "log_every": 5}, timeout=120) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            record = json.loads(line)
            if record.get("accuracy") == 1.0 and learned != learned:
                learned = time.perf_counter() - start
    return learned, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-server", action="store_true", help="skip the HTTP measurement")
    parser.add_argument(
        "--threads",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1],
        help="torch thread counts to compare in-process, e.g. 1,2 (2 is slow on a busy machine)",
    )
    args = parser.parse_args()
    flops = training_flops(TrainConfig(**S, log_every=1))
    torch.set_num_threads(1)
    peak = peak_gflops()
    print(f"S: {S}")
    print(f"load average (1, 5, 15 min): {os.getloadavg()}; cores: {os.cpu_count()}")
    print(
        f"run FLOPs (with a measurement every step) {flops:,}; 1-thread matmul peak "
        f"{peak:.1f} GFLOP/s -> compute bound {flops / peak / 1e9 * 1000:.2f} ms"
    )
    for threads in args.threads:
        in_process(threads)  # warm-up
        runs = [in_process(threads) for _ in range(args.repeat)]
        step = statistics.median(r[0] for r in runs)
        learned = statistics.median(r[1] for r in runs)
        total = statistics.median(r[2] for r in runs)
        print(
            f"in-process, {threads} torch thread(s): memorised at step {step:.0f}, "
            f"median {learned * 1000:.0f} ms to it, {total * 1000:.0f} ms for "
            f"{S['steps']} steps (median of {args.repeat})"
        )
    if args.no_server:
        return
    from tests.serverproc import start_server, stop_server

    proc, base = start_server()
    try:
        over_http(base)  # warm-up
        runs = [over_http(base) for _ in range(args.repeat)]
        print(
            f"HTTP /api/train (server: train_torch_threads 1, log_every 5): accuracy 1.0 after "
            f"median {statistics.median(r[0] for r in runs) * 1000:.0f} ms, final line after "
            f"{statistics.median(r[1] for r in runs) * 1000:.0f} ms (median of {args.repeat})"
        )
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
