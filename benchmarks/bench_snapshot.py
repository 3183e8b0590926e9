"""Time POST /api/snapshot (standalone HTML with Plotly inlined) through the app.

Run from the checkout (so its `app` is imported):
    /work/main/.venv/bin/python -m benchmarks.bench_snapshot
Prints, per configuration, the median time of 5 calls and the size of the file.
"""

from __future__ import annotations

import statistics
import time

from fastapi.testclient import TestClient

from app.main import create_app

CONFIGS = [
    {"d_model": 16, "d_ff": 64, "num_tokens": 6},
    {"d_model": 512, "d_ff": 2048, "num_tokens": 8},
    {"d_model": 1024, "d_ff": 4096, "num_tokens": 32},
]


def main() -> None:
    with TestClient(create_app()) as client:
        for config in CONFIGS:
            body = {**config, "activation": "relu", "position": 2, "scale": 2.0}
            client.post("/api/snapshot", json=body)  # warm the weight cache
            times, size = [], 0
            for _ in range(5):
                start = time.perf_counter()
                response = client.post("/api/snapshot", json=body)
                times.append(time.perf_counter() - start)
                size = len(response.content)
            print(
                f"T={config['num_tokens']:>2} {config['d_model']:>4}->{config['d_ff']:<5} "
                f"median {statistics.median(times) * 1000:7.1f} ms  {size / 1e6:5.2f} MB"
            )


if __name__ == "__main__":
    main()
