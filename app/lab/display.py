"""Display summaries in API answers: big [T, n] tensors are sent as a window of real units.

The rule (documented in `ForwardRequest.display` and `ForwardResponse.reduction`): with
`display='auto'`, when the [T, n] tensors of one answer together hold more than
`display_max_values` numbers, groups of tensors that share their columns (pre_activation,
up, hidden and dropped share the d_ff units; input and output the d_model features) are cut,
widest group first, to a window of `max(1, display_keep_values // T)` consecutive columns
each (starting where the request's `unit_start` / `feature_start` says), until the answer
fits. A window of consecutive units keeps the tensor's statistics on screen (a ReLU layer
that is half zeros is drawn half zeros, a dropout mask shows about p dropped), which the
older selection of the most active columns (`display='top_rms'`, kept on request) did not.
The defaults (81,920 and 8,192) send T=16 of the paper's base model (512 -> 2048)
whole and keep every answer of every preset under 1 MB. Small configurations are never
touched, so their numbers are exactly the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from app.analysis.display import TOP_RMS, WINDOW, top_rms_columns, window_columns
from app.lab.limits import Limits


@dataclass(frozen=True)
class Group:
    """[T, n] tensors that share their n columns. `ranked_by` names the group's lead tensor:
    its key in `summarise`'s `starts`, and (display='top_rms') the one whose per-column RMS
    over the T rows chooses the columns to keep. None: an absent tensor."""

    tensors: dict[str, torch.Tensor | None]
    ranked_by: str

    @property
    def ranking(self) -> torch.Tensor:
        found = self.tensors[self.ranked_by]
        if found is None:
            raise ValueError(f"ranked_by={self.ranked_by!r} names an absent tensor")
        return found

    @property
    def numbers(self) -> int:
        return sum(t.numel() for t in self.tensors.values() if t is not None)


def summarise(
    groups: list[Group],
    limits: Limits,
    display: str,
    starts: dict[str, int] | None = None,
) -> tuple[dict[str, np.ndarray[Any, Any] | None], dict[str, Any] | None]:
    """The NumPy arrays to send for every tensor of `groups`, and the `reduction` field.

    Args:
        groups: the answer's [T, n] tensors, by column-sharing group.
        limits: `display_max_values` (the answer's budget) and `display_keep_values`.
        display: "auto" (a window of consecutive columns above the budget), "top_rms" (the
            most active columns above the budget) or "full" (never summarised).
        starts: first column of each group's window, by the group's `ranked_by` name
            (e.g. {"hidden": unit_start, "output": feature_start}); 0 when absent. A window
            that would run past the last column is moved left so that it fits.

    Returns:
        (arrays by name, None or the `ReductionOut` dict). Arrays are views of the
        tensors when nothing is cut, so small answers carry the model's exact numbers.
    """
    arrays: dict[str, np.ndarray[Any, Any] | None] = {}
    cut: list[dict[str, Any]] = []
    total = sum(g.numbers for g in groups)
    summarised = display in ("auto", "top_rms")
    for group in sorted(groups, key=lambda g: -g.ranking.shape[1]):  # widest first
        rows, cols = group.ranking.shape
        k = max(1, limits.display_keep_values // rows)
        if not summarised or total <= limits.display_max_values or k >= cols:
            arrays |= {n: None if t is None else t.numpy() for n, t in group.tensors.items()}
            continue
        present = {n: t for n, t in group.tensors.items() if t is not None}
        arrays |= {n: None for n, t in group.tensors.items() if t is None}
        window: dict[str, int | None] = {"start": None, "stop": None}
        if display == "top_rms":
            kept = top_rms_columns(group.ranking, k)
            arrays |= {n: t.index_select(1, kept).numpy() for n, t in present.items()}
        else:
            start, stop = window_columns(cols, k, (starts or {}).get(group.ranked_by, 0))
            kept = torch.arange(start, stop)
            # a copy of the slice (orjson needs C order): the model's numbers, bit for bit
            arrays |= {n: t[:, start:stop].contiguous().numpy() for n, t in present.items()}
            window = {"start": start, "stop": stop}
        total -= group.numbers - len(present) * rows * k
        cut.append(
            {
                "tensors": list(present),
                "full_shape": [rows, cols],
                "kept": kept.numpy(),
                "ranked_by": group.ranked_by,
                **window,
            }
        )
    if not cut:
        return arrays, None
    reduction = {
        "method": TOP_RMS if display == "top_rms" else WINDOW,
        "max_values": limits.display_max_values,
        "keep_values": limits.display_keep_values,
        "groups": cut,
    }
    return arrays, reduction
