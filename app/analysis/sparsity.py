"""How many hidden units are inactive, per token, per neuron and overall.

The rule: for ReLU a unit is inactive when it is exactly 0.0 (ReLU's own zeros). Smooth
activations (GELU, SiLU, gated variants) almost never give exact zeros, so a unit counts
as inactive when `|h| < threshold`; the threshold is part of the result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from app.model.activations import get_activation

DEFAULT_THRESHOLD = 0.01
"""Default near-zero threshold for smooth activations (units of the hidden activation)."""


@dataclass(frozen=True)
class SparsityStats:
    """Sparsity of `hidden` [T, d_ff].

    Attributes:
        per_token: float32 [T], fraction of the d_ff units that are inactive for each token.
        per_neuron: float32 [d_ff], fraction of the T tokens on which each unit is active.
        overall: fraction of all T x d_ff values that are inactive, in [0, 1].
        dead_neurons: indices of units inactive on every one of the T tokens.
        threshold: 0.0 with rule "exact_zero" (ReLU), else the |h| threshold used.
        rule: "exact_zero" or "abs_below_threshold".
    """

    per_token: npt.NDArray[np.float32]
    per_neuron: npt.NDArray[np.float32]
    overall: float
    dead_neurons: list[int]
    threshold: float
    rule: str


def inactive_mask(
    hidden: torch.Tensor, activation: str, threshold: float = DEFAULT_THRESHOLD
) -> tuple[torch.Tensor, float, str]:
    """Boolean mask of inactive units, with the threshold and rule that made it.

    Args:
        hidden: float32 [..., d_ff], after the activation.
        activation: registry key; decides the rule (exact zeros for ReLU).
        threshold: |h| below this counts as inactive for smooth activations (>= 0).

    Raises:
        ValueError: unknown activation, or a negative threshold.
    """
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    if get_activation(activation).exact_zeros:
        return hidden == 0, 0.0, "exact_zero"
    return hidden.abs() < threshold, float(threshold), "abs_below_threshold"


def sparsity(
    hidden: torch.Tensor, activation: str, threshold: float = DEFAULT_THRESHOLD
) -> SparsityStats:
    """Sparsity statistics of one sequence's hidden activations.

    Args:
        hidden: float32 [T, d_ff], after the activation, before dropout.
        activation: registry key (see `inactive_mask` for the rule).
        threshold: near-zero threshold for smooth activations.

    Returns:
        SparsityStats computed on the full tensor.

    Raises:
        ValueError: if `hidden` is not 2-D, or as `inactive_mask`.
    """
    if hidden.dim() != 2:
        raise ValueError(f"hidden must be [T, d_ff], got shape {list(hidden.shape)}")
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    # NumPy, not torch: at the page's sizes each torch op costs more than its work (this
    # was ~40% of a small /api/forward). Counts of inactive units are exact integers, and
    # count / n in float32 is what torch's float32 mean gives (tests/analysis compare).
    h = hidden.detach().numpy()
    if get_activation(activation).exact_zeros:
        inactive, used_threshold, rule = h == 0, 0.0, "exact_zero"
    else:  # compared in float32, as torch compares a float32 tensor with a Python float
        inactive = np.abs(h) < np.float32(threshold)
        used_threshold, rule = float(threshold), "abs_below_threshold"
    tokens, units = inactive.shape
    per_token = inactive.sum(axis=1).astype(np.float32) / np.float32(units)  # (T,)
    per_neuron_active = np.float32(1.0) - (
        inactive.sum(axis=0).astype(np.float32) / np.float32(tokens)
    )  # (d_ff,)
    overall = np.float32(np.count_nonzero(inactive)) / np.float32(inactive.size)
    dead = np.flatnonzero(inactive.all(axis=0))
    return SparsityStats(
        per_token=per_token,
        per_neuron=per_neuron_active,
        overall=float(overall),
        dead_neurons=dead.tolist(),
        threshold=used_threshold,
        rule=rule,
    )
