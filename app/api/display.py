"""Display summaries in API answers: big [T, n] tensors keep their most active columns.

The rule (documented in `ForwardRequest.display` and `ForwardResponse.reduction`): with
`display='auto'`, a group of [T, n] tensors that share their columns (pre_activation, up,
hidden, dropped share the d_ff units; input and output share the d_model features) is cut
to `max(1, display_keep_values // T)` columns when T x n > `display_max_values`. Small
configurations are never touched, so their numbers are exactly the model's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from app.analysis.display import TOP_RMS, columns_to_keep, top_rms_columns
from app.config import Settings


def reduce_group(
    tensors: dict[str, torch.Tensor | None],
    ranked_by: str,
    settings: Settings,
    display: str,
) -> tuple[dict[str, np.ndarray[Any, Any] | None], dict[str, Any] | None]:
    """NumPy arrays to send for `tensors` (all [T, n], same n), and the group's reduction.

    Args:
        tensors: name -> [T, n] tensor, or None for an absent tensor (sent as null).
        ranked_by: the name of the tensor whose per-column RMS chooses the columns.
        settings: `display_max_values` and `display_keep_values`.
        display: "auto" (summarise above the limit) or "full" (never).

    Returns:
        (arrays, group): arrays by name (views of the tensors when nothing is cut), and
        None or the `ColumnReductionOut` dict {tensors, full_shape, kept, ranked_by}.
    """
    ranking = tensors[ranked_by]
    if ranking is None:
        raise ValueError(f"ranked_by={ranked_by!r} names an absent tensor")
    rows, cols = ranking.shape
    k = None
    if display == "auto":
        k = columns_to_keep(
            rows * cols, rows, settings.display_max_values, settings.display_keep_values
        )
    if k is None or k >= cols:
        return {n: None if t is None else t.numpy() for n, t in tensors.items()}, None
    kept = top_rms_columns(ranking, k)
    arrays = {n: None if t is None else t.index_select(1, kept).numpy() for n, t in tensors.items()}
    group = {
        "tensors": [n for n, t in tensors.items() if t is not None],
        "full_shape": [rows, cols],
        "kept": kept.numpy(),
        "ranked_by": ranked_by,
    }
    return arrays, group


def reduction_out(groups: list[dict[str, Any] | None], settings: Settings) -> dict[str, Any] | None:
    """The `reduction` field: None when no group was cut."""
    cut = [g for g in groups if g is not None]
    if not cut:
        return None
    return {
        "method": TOP_RMS,
        "max_values": settings.display_max_values,
        "keep_values": settings.display_keep_values,
        "groups": cut,
    }
