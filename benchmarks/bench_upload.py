"""Time POST /api/weights/upload for a 384 -> 1536 and a 768 -> 3072 layer.

Run from the checkout (so its `app` is imported):
    /work/main/.venv/bin/python -m benchmarks.bench_upload [--repeats 3] [--tokens 8]

Builds each layer's file as .safetensors, .npz and a PyTorch state_dict .pt in a temporary
directory (FFN Lab's names w1/b1/w2/b2, float32, one file per repeat with its own seed, so no
upload is answered from the server's content-hash cache), starts its own server on a free
loopback port (benchmarks.server), uploads each file, then runs the first POST /api/forward
with the returned weights_id. Prints per format and size: the file's bytes, the median
upload + parse time and the median first forward, each beside its bound on this machine:
    upload + parse >= file bytes / memory read bandwidth (the bytes are read at least once);
    first forward  >= max(weight bytes / bandwidth, FLOPs / torch.matmul GFLOP/s).
Bounded: sizes x formats x repeats requests, each with a timeout; the server is stopped on
exit whatever happens.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import torch
from safetensors.torch import save as save_safetensors

from app.model.ffn import FFNConfig, PositionwiseFeedForward
from benchmarks import limits
from benchmarks.server import Server

SIZES = ((384, 1536), (768, 3072))
FORMATS = ("safetensors", "npz", "pt")
ACTIVATION = "gelu"
TIMEOUT_S = 120.0


def layer_file(d_model: int, d_ff: int, fmt: str, seed: int) -> bytes:
    """One layer's weights (FFN Lab's names, float32) as the bytes of a `fmt` file."""
    ffn = PositionwiseFeedForward(FFNConfig(d_model, d_ff, ACTIVATION), seed=seed)
    state = {k: v.contiguous() for k, v in ffn.weights().named().items()}
    if fmt == "safetensors":
        return save_safetensors(state)
    buffer = io.BytesIO()
    if fmt == "npz":
        np.savez(buffer, **{k: v.numpy() for k, v in state.items()})
    else:
        torch.save(state, buffer)
    return buffer.getvalue()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="files per format and size")
    parser.add_argument("--tokens", type=int, default=8, help="T of the first forward")
    args = parser.parse_args()
    repeats = max(1, min(args.repeats, 9))

    bandwidth = limits.read_bandwidth_gbs() * 1e9
    gflops = limits.matmul_gflops() * 1e9
    print(f"machine: read bandwidth {bandwidth / 1e9:.1f} GB/s, matmul {gflops / 1e9:.1f} GFLOP/s")
    with tempfile.TemporaryDirectory() as tmp:
        files: dict[tuple[int, int, str], list[Path]] = {}
        for d_model, d_ff in SIZES:
            for fmt in FORMATS:
                paths = []
                for r in range(repeats):
                    path = Path(tmp) / f"layer{d_model}x{d_ff}-{r}.{fmt}"
                    path.write_bytes(layer_file(d_model, d_ff, fmt, seed=100 + r))
                    paths.append(path)
                files[(d_model, d_ff, fmt)] = paths
        with Server() as server, httpx.Client(base_url=server.base, timeout=TIMEOUT_S) as http:
            http.post("/api/forward", json={"d_model": 16, "d_ff": 64})  # warm the app
            print(
                f"{'layer':>11} {'format':>11} {'file bytes':>12} {'upload+parse':>12} "
                f"{'bound':>11} {'1st forward':>12} {'bound':>11}"
            )
            for (d_model, d_ff, fmt), paths in files.items():
                uploads, forwards = [], []
                size = 0
                for path in paths:
                    data = path.read_bytes()
                    size = len(data)
                    start = time.perf_counter()
                    r = http.post(
                        "/api/weights/upload",
                        params={"filename": path.name},
                        content=data,
                        headers={"content-type": "application/octet-stream"},
                    )
                    uploads.append(time.perf_counter() - start)
                    r.raise_for_status()
                    answer = r.json()
                    body = {
                        "d_model": d_model,
                        "d_ff": d_ff,
                        "activation": ACTIVATION,
                        "weights_id": answer["weights_id"],
                        "num_tokens": args.tokens,
                    }
                    start = time.perf_counter()
                    r = http.post("/api/forward", json=body)
                    forwards.append(time.perf_counter() - start)
                    r.raise_for_status()
                weights = limits.weight_bytes(d_model, d_ff, ACTIVATION)
                flops = limits.ffn_flops(d_model, d_ff, ACTIVATION, True, args.tokens)
                print(
                    f"{d_model:>4}->{d_ff:<6} {fmt:>11} {size:>12,} "
                    f"{_ms(statistics.median(uploads))} {_ms(size / bandwidth)}  "
                    f"{_ms(statistics.median(forwards))} "
                    f"{_ms(max(weights / bandwidth, flops / gflops))}"
                )
    print(f"medians of {repeats} files each; T = {args.tokens}; loopback, one uvicorn worker")


if __name__ == "__main__":
    main()
