"""The machine's physical limits, measured in the same run: matmul GFLOP/s, memory bandwidth,
and the bare forward pass (no HTTP, no JSON) of the same tensors the server computes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from app.analysis import flop_count
from app.model.activations import get_activation
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.model.seeding import generator

FRAME_MS = 1000.0 / 60.0
"""One frame at 60 Hz: nothing on screen can update faster."""


def _times(fn: Callable[[], Any], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _median_time(fn: Callable[[], Any], repeats: int) -> float:
    return statistics.median(_times(fn, repeats))


def matmul_gflops(n: int = 1024, repeats: int = 20) -> float:
    """torch.matmul throughput of [n, n] @ [n, n] float32 in GFLOP/s (2 n^3 FLOPs), with the
    torch threads this process has; the best of `repeats` (the limit, not the average)."""
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    for _ in range(3):
        torch.matmul(a, b)
    seconds = min(_times(lambda: torch.matmul(a, b), repeats))
    return 2 * n**3 / seconds / 1e9


def read_bandwidth_gbs(megabytes: int = 256, repeats: int = 5) -> float:
    """Memory read bandwidth in GB/s: `sum()` over a float32 tensor far larger than caches;
    the best of `repeats`."""
    x = torch.ones(megabytes * 1024 * 1024 // 4)
    x.sum()
    seconds = min(_times(lambda: x.sum(), repeats))
    return x.numel() * 4 / seconds / 1e9


def ffn_flops(d_model: int, d_ff: int, activation: str, bias: bool, tokens: int) -> int:
    """FLOPs of one forward pass (app.analysis.flop_count's convention)."""
    return flop_count(FFNConfig(d_model, d_ff, activation, bias), tokens).total


def weight_bytes(d_model: int, d_ff: int, activation: str) -> int:
    """float32 bytes of the weight matrices (w1, w2, w_gate)."""
    matrices = 3 if get_activation(activation).gated else 2
    return 4 * matrices * d_model * d_ff


def model_and_tokens(
    d_model: int,
    d_ff: int,
    activation: str,
    bias: bool,
    tokens: int,
    seed: int = 0,
    input_seed: int = 0,
) -> tuple[PositionwiseFeedForward, torch.Tensor]:
    """The model and tokens the server uses for the same request: weights seeded by `seed`,
    x ~ N(0, 1) [tokens, d_model] from the "inputs" stream of `input_seed`."""
    config = FFNConfig(d_model, d_ff, activation, bias)
    weights = FFNWeights.seeded(d_model, d_ff, seed, gated=config.gated, bias=bias)
    model = PositionwiseFeedForward(config, weights).eval()
    x = torch.randn(tokens, d_model, generator=generator(input_seed, "inputs"))
    return model, x


def time_forward(model: PositionwiseFeedForward, x: torch.Tensor) -> float:
    """Seconds of one `model.trace(x)` under inference mode: the bare forward pass."""
    with torch.inference_mode():
        t0 = time.perf_counter()
        model.trace(x)
        return time.perf_counter() - t0
