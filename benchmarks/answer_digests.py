"""SHA-256 of the answers to a fixed set of requests, to show that a speed-up changed no byte.

Run it in each checkout (the app is imported from the current directory) and compare:

    PYTHONPATH=. python -m benchmarks.answer_digests --out /tmp/new.json
    (cd /old/checkout && PYTHONPATH=. python -m benchmarks.answer_digests --out /tmp/old.json)
    python -m benchmarks.answer_digests --compare /tmp/old.json /tmp/new.json

The set: 40 random /api/forward bodies (all activations, biases, T 1-64, dropout in train
mode, thresholds) and their /api/perturb, every teaching view at 1024 -> 4096 (SwiGLU and
ReLU: big enough for `app.model.parallel` to split), and with `--llama` the LLaMA-7B
forward, perturb and teaching views at T 8.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.main import create_app

ACTIVATIONS = ["relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu", "geglu_tanh"]
TEACHING: dict[str, dict[str, Any]] = {
    "/api/misconceptions": {"position": 1},
    "/api/variants": {},
    "/api/dropout": {"dropout": 0.1},
    "/api/block": {"norm": "pre"},
    "/api/conv1d-check": {},
    "/api/attention-vs-ffn": {"position": 1, "num_heads": 8},
}


def requests(llama: bool) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(7)
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(40):
        body: dict[str, Any] = {
            "d_model": rng.choice([8, 16, 64, 128, 512]),
            "d_ff": rng.choice([16, 64, 256, 2048]),
            "activation": rng.choice(ACTIVATIONS),
            "bias": rng.random() < 0.5,
            "num_tokens": rng.randint(1, 64),
            "seed": rng.randint(0, 4),
            "input_seed": rng.randint(0, 4),
        }
        if rng.random() < 0.3:
            body |= {"mode": "train", "dropout": 0.25, "dropout_seed": 3}
        if rng.random() < 0.3:
            body["sparsity_threshold"] = rng.choice([0.0, 0.05, 0.3])
        out += [("/api/forward", body), ("/api/perturb", {**body, "position": 0, "scale": 0.5})]
    big = [
        {"d_model": 1024, "d_ff": 4096, "activation": "swiglu", "bias": True, "num_tokens": 8},
        {"d_model": 1024, "d_ff": 4096, "activation": "relu", "bias": False, "num_tokens": 5},
    ]
    if llama:
        big.append(
            {"d_model": 4096, "d_ff": 11008, "activation": "swiglu", "bias": False, "num_tokens": 8}
        )
    for b in big:
        out += [("/api/forward", b), ("/api/perturb", {**b, "position": 2})]
        out += [(url, {**b, **extra}) for url, extra in TEACHING.items()]
    return out


def digests(llama: bool) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    with TestClient(create_app()) as client:
        for n, (url, body) in enumerate(requests(llama)):
            r = client.post(url, json=body)
            found[f"{n} {url}"] = [r.status_code, hashlib.sha256(r.content).hexdigest()]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--llama", action="store_true")
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args(argv)
    if args.compare:
        old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in args.compare)
        differ = [k for k in old if old[k] != new.get(k)]
        print(f"{len(old)} answers, {len(differ)} differ {differ[:10]}")
        return 1 if differ or len(old) != len(new) else 0
    found = digests(args.llama)
    text = json.dumps(found, indent=0)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(found)} answers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
