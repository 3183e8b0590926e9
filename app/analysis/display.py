"""Display summaries of big [T, n] tensors: which columns to send, and a histogram.

A browser cannot usefully draw 11,008 units x 32 tokens (LLaMA-7B's hidden layer), and
sending them costs megabytes. These functions choose a few columns to show and bin the
values of a whole tensor; the statistics (sparsity, dead units, norms) are computed
elsewhere on the full tensors and are not affected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

TOP_RMS = "top_rms_columns"
"""Method name: the k columns with the largest root mean square over the T rows."""

WINDOW = "window"
"""Method name: k consecutive columns starting at a chosen one (real units, no selection)."""


def window_columns(n: int, k: int, start: int) -> tuple[int, int]:
    """The window [start, stop) of `k` consecutive columns out of `n`, moved left so it fits.

    A window keeps the tensor's statistics (a ReLU layer that is half zeros shows half zeros),
    which a selection of the most active columns does not.

    Raises:
        ValueError: if `k` is not in [1, n] or `start` is negative.
    """
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    first = min(start, n - k)
    return first, first + k


def top_rms_columns(ranking: torch.Tensor, k: int) -> torch.Tensor:
    """Indices (int64, ascending) of the `k` columns of `ranking` [T, n] with the largest
    root mean square over the T rows; ties go to the lower index.

    For ReLU's hidden layer these are the most active units; a dead unit (all zeros) is
    never chosen before a live one. Sorting the indices keeps the units in their order.

    Raises:
        ValueError: if `ranking` is not 2-D or `k` is not in [1, n].
    """
    if ranking.dim() != 2:
        raise ValueError(f"ranking must be [T, n], got shape {list(ranking.shape)}")
    n = ranking.shape[1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    rms = ranking.square().mean(dim=0)  # (n,), the order of RMS
    # A stable descending sort: equal RMS keeps the lower index first.
    order = torch.sort(rms, descending=True, stable=True).indices[:k]
    return torch.sort(order).values


@dataclass(frozen=True)
class Histogram:
    """Counts of values in equal-width bins.

    Attributes:
        edges: float64 [bins + 1], bin i is [edges[i], edges[i+1]) (the last one closed).
        counts: int64 [bins], how many values fell in each bin; they sum to the tensor's size.
    """

    edges: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]


def histogram(values: torch.Tensor, bins: int) -> Histogram:
    """Equal-width histogram of every element of `values` over [min, max].

    Bin i holds lo + i w <= v < lo + (i + 1) w with w = (max - min) / bins; the maximum
    falls in the last bin. A constant tensor gets one bin of width 1 centred on its value.

    Raises:
        ValueError: if `bins` < 1 or `values` is empty.
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if values.numel() == 0:
        raise ValueError("values must not be empty")
    flat = values.detach().reshape(-1).numpy()
    low, high = float(flat.min()), float(flat.max())
    if low == high:
        return Histogram(np.array([low - 0.5, low + 0.5]), np.array([flat.size], np.int64))
    index = ((flat - low) * (bins / (high - low))).astype(np.int64)  # float64 scale
    np.minimum(index, bins - 1, out=index)
    counts = np.bincount(index, minlength=bins)
    width = (high - low) / bins
    edges = np.empty(bins + 1)
    edges[:bins] = low + width * np.arange(bins, dtype=np.float64)  # the same float64 ops
    edges[bins] = high
    return Histogram(edges, counts.astype(np.int64, copy=False))
