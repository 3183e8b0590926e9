"""Small comparisons of tensors used by the teaching views: plain numbers out."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over all elements (0.0 exactly when a and b are bit-identical).

    Raises:
        ValueError: when the shapes differ.
    """
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {list(a.shape)} and {list(b.shape)}")
    if a.numel() == 0:
        return 0.0
    return float((a - b).abs().max())


def row_norms(a: torch.Tensor) -> npt.NDArray[np.float32]:
    """float32 [T]: the L2 norm of each row of a [T, d]."""
    norms: npt.NDArray[np.float32] = torch.linalg.vector_norm(a, dim=1).numpy()
    return norms


def row_moments(a: torch.Tensor) -> dict[str, npt.NDArray[np.float32]]:
    """Mean and (biased) standard deviation of each row of a [T, d], as LayerNorm sees them."""
    return {
        "mean": a.mean(dim=1).numpy(),
        "std": a.std(dim=1, correction=0).numpy(),
    }


def hidden_fractions(hidden: torch.Tensor, threshold: float) -> dict[str, float]:
    """Fractions of hidden values that are exactly 0, |h| < threshold, and negative.

    Raises:
        ValueError: for a negative threshold.
    """
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    n = hidden.numel()
    return {
        "exact_zero": float((hidden == 0).sum()) / n,
        "near_zero": float((hidden.abs() < threshold).sum()) / n,
        "negative": float((hidden < 0).sum()) / n,
    }
