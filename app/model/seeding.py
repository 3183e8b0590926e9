"""Independent random streams: one generator per (seed, stream name).

Two `torch.Generator`s seeded with the same integer produce the same numbers, so drawing
the weights and the input tokens from equal seeds (the default 0/0) made token t
anti-correlated with column t of W1 (the pre-activation of unit t on token t was a -6 to
-8 sigma outlier at 512 -> 2048). Every stream therefore gets its own seed, derived from
the user's seed and the stream's name:

    stream_seed(seed, name) = int.from_bytes(sha256(f"ffn-lab/{name}/{seed}").digest()[:8],
                                             "little") & (2**63 - 1)

SHA-256 mixes every bit of both inputs, so streams of different names (or seeds) are
independent for any practical purpose, and the rule is reproducible with the standard
library alone (the exported PyTorch program carries the same three lines).

Stream names in use (a contract: renaming one re-rolls that stream for every saved link):
    "weights"    W1, b1, W2, b2 (and the gate) of the FFN, `FFNWeights.seeded`
    "inputs"     the random tokens of /api/forward and friends
    "dropout"    the dropout mask
    "attention"  the seeded self-attention sub-layer's weights
    "nudge"      the random direction of a perturbation
    "layer{i}.weights", ...  per-layer streams of a stack (layer i's own FFN)
"""

from __future__ import annotations

import hashlib

import torch

SEED_MASK = 2**63 - 1


def stream_seed(seed: int, stream: str) -> int:
    """The 63-bit seed of stream `stream` for the user's `seed` (see the module docstring).

    Raises:
        ValueError: if `seed` is negative or `stream` is empty.
    """
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not stream:
        raise ValueError("stream name must not be empty")
    digest = hashlib.sha256(f"ffn-lab/{stream}/{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & SEED_MASK


def generator(seed: int, stream: str) -> torch.Generator:
    """A CPU `torch.Generator` for stream `stream` of `seed`, independent of every other."""
    return torch.Generator().manual_seed(stream_seed(seed, stream))
