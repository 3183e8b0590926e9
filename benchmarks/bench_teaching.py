"""Time the teaching endpoints through the real app (TestClient), median of a few calls.

Run from the checkout (so its `app` is imported):
    /work/main/.venv/bin/python -m benchmarks.bench_teaching [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from fastapi.testclient import TestClient

from app.main import create_app

CONFIGS = {
    "16/64 T=6": {"d_model": 16, "d_ff": 64, "num_tokens": 6},
    "512/2048 T=16 (Transformer base)": {"d_model": 512, "d_ff": 2048, "num_tokens": 16},
}
ENDPOINTS = {
    "/api/attention-vs-ffn": {"position": 1, "scale": 1.0, "num_heads": 8},
    "/api/block": {"norm": "pre"},
    "/api/variants": {},
    "/api/budget": {},
    "/api/conv1d-check": {},
    "/api/dropout": {"dropout": 0.1},
    "/api/misconceptions": {"position": 1},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with TestClient(create_app()) as client:
        for label, base in CONFIGS.items():
            print(f"## {label}")
            for url, extra in ENDPOINTS.items():
                body = {**base, **extra}
                if "d_model" in body and body["d_model"] % body.get("num_heads", 1):
                    body["num_heads"] = 1
                client.post(url, json=body).raise_for_status()  # warm the weight cache
                times = []
                size = 0
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    response = client.post(url, json=body)
                    times.append((time.perf_counter() - start) * 1000)
                    size = len(response.content)
                print(f"{url:24s} median {statistics.median(times):8.1f} ms  {size / 1024:8.1f} kB")


if __name__ == "__main__":
    main()
