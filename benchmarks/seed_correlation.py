"""Is the pre-activation of unit t on token t an outlier? The z[t, t] statistic.

For each seed pair (seed, input_seed) the server's own code draws the weights
(`FFNWeights.seeded`) and the random tokens (`runner.input_tokens`), computes the
pre-activation Z = x W1 + b1 [T, d_ff] and standardises it by its own mean and standard
deviation. If the weights and the tokens are independent, the diagonal entries z[t, t]
(t < T) are distributed like every other entry: mean ~0, std ~1. The legacy rule (both
generators seeded with the bare integer) is computed alongside for comparison.

    python -m benchmarks.seed_correlation                 # 512 -> 2048, T 16, seeds 0-19
    python -m benchmarks.seed_correlation --d-model 4096 --d-ff 11008 --activation swiglu \
        --pairs 3                                          # LLaMA-7B's up (slow)
"""

from __future__ import annotations

import argparse
import math

import torch

from app.api.schemas.forward import ForwardRequest
from app.lab.forward import input_tokens
from app.model.activations import get_activation
from app.model.ffn_weights import FFNWeights, _linear_init


def standardised(z: torch.Tensor) -> torch.Tensor:
    """z standardised by its own mean and std (float64)."""
    z = z.double()
    return (z - z.mean()) / z.std()


def current(
    d_model: int, d_ff: int, seed: int, input_seed: int, t: int, gated: bool
) -> torch.Tensor:
    """z-scores of x W1 + b1 (the `up` projection for gated variants) as the server draws them."""
    w = FFNWeights.seeded(d_model, d_ff, seed, gated=gated, bias=True)
    req = ForwardRequest(d_model=d_model, d_ff=d_ff, num_tokens=t, input_seed=input_seed)
    x = input_tokens(req)
    return standardised(x @ w.w1 + w.b1)  # type: ignore[operator]


def legacy(d_model: int, d_ff: int, seed: int, input_seed: int, t: int) -> torch.Tensor:
    """The same, drawn by the legacy rule: `torch.Generator().manual_seed(seed)` for both."""
    w1, b1 = _linear_init(d_model, d_ff, torch.Generator().manual_seed(seed))
    x = torch.randn(t, d_model, generator=torch.Generator().manual_seed(input_seed))
    return standardised(x @ w1 + b1)


def diagonal_stats(zs: list[torch.Tensor]) -> tuple[float, float, float, float]:
    """(mean, std) of the diagonal z[t, t] over all pairs, then (mean, std) of the rest."""
    diag, rest = [], []
    for z in zs:
        t = min(z.shape)
        mask = torch.zeros_like(z, dtype=torch.bool)
        mask[torch.arange(t), torch.arange(t)] = True
        diag.append(z[mask])
        rest.append(z[~mask])
    d, r = torch.cat(diag), torch.cat(rest)
    return float(d.mean()), float(d.std()), float(r.mean()), float(r.std())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--d-ff", type=int, default=2048)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=20, help="seeds 0..pairs-1 of each kind")
    parser.add_argument("--activation", default="relu")
    args = parser.parse_args()
    gated = get_activation(args.activation).gated
    d, f, t, n = args.d_model, args.d_ff, args.tokens, args.pairs
    print(
        f"z[t, t] of x W1 + b1 ({'up' if gated else 'pre_activation'}), {d} -> {f}, T {t}, "
        f"{n} pairs each; independent streams give mean 0, std 1 "
        f"(standard error of the mean {1 / math.sqrt(n * t):.3f})"
    )
    print("rule     | seeds                  | diag mean | diag std | others mean | others std")
    for kind, pairs in (
        ("input_seed = seed", [(s, s) for s in range(n)]),
        ("input_seed = seed + 1", [(s, s + 1) for s in range(n)]),
    ):
        for rule in ("legacy", "streams"):
            zs = [
                legacy(d, f, s, i, t) if rule == "legacy" else current(d, f, s, i, t, gated)
                for s, i in pairs
            ]
            dm, ds, rm, rs = diagonal_stats(zs)
            print(f"{rule:8} | {kind:22} | {dm:+9.2f} | {ds:8.2f} | {rm:+11.3f} | {rs:10.3f}")


if __name__ == "__main__":
    main()
