"""Cold first-load time of the pretrained MiniLM-L6 layer, in a fresh process each run.

Run: /work/main/.venv/bin/python benchmarks/pretrained_load.py [runs]
Prints, per run: import of torch, load of weights + tokenizer (safetensors + tokenizers),
and the first forward of a 9-token sentence to layer 5.
"""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = """
import time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from app.model.pretrained import get_pretrained
model = get_pretrained()
t2 = time.perf_counter()
encoded = model.encode("The cat sat on the mat.")
model.encoder.run_to(encoded.ids, 5)
t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
"""


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for i in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, env=env
        ).stdout.split()
        torch_s, load_s, first_s = (float(x) for x in out)
        print(
            f"run {i + 1}: import torch {torch_s:.2f} s, load weights + tokenizer {load_s:.2f} s, "
            f"first forward {first_s * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
