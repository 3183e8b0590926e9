"""Compare the FFN output before and after nudging one token.

Because the FFN is position-wise (Vaswani et al. 2017, eq. 2), only the nudged row may
change; every other row must be bit-identical. The two states must come from two
separate forward calls of the same shape: batching them together lets vectorised
kernels round the tail differently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch


@dataclass(frozen=True)
class PerturbationStats:
    """How the output moved.

    Attributes:
        delta: float32 [T, d_model], output_perturbed - output.
        delta_norm_per_position: float32 [T], L2 norm of each row of `delta`.
        changed_positions: indices of rows with any element not bit-identical.
        max_abs_change_other_positions: max |delta| over all rows except `position`;
            exactly 0.0 for a position-wise map.
    """

    delta: npt.NDArray[np.float32]
    delta_norm_per_position: npt.NDArray[np.float32]
    changed_positions: list[int]
    max_abs_change_other_positions: float


def compare_outputs(
    output: torch.Tensor, output_perturbed: torch.Tensor, position: int
) -> PerturbationStats:
    """Row-by-row difference of two outputs [T, d_model] of the same shape.

    Raises:
        ValueError: different shapes, not 2-D, or `position` outside [0, T).
    """
    if output.shape != output_perturbed.shape or output.dim() != 2:
        raise ValueError(
            f"outputs must both be [T, d_model], got {list(output.shape)} "
            f"and {list(output_perturbed.shape)}"
        )
    num_tokens = output.shape[0]
    if not 0 <= position < num_tokens:
        raise ValueError(f"position must be in [0, {num_tokens - 1}], got {position!r}")
    delta = output_perturbed - output  # (T, d_model)
    changed = torch.nonzero((output_perturbed != output).any(dim=1)).flatten()
    others = torch.ones(num_tokens, dtype=torch.bool)
    others[position] = False
    other_rows = delta[others]
    max_other = float(other_rows.abs().max()) if other_rows.numel() else 0.0
    return PerturbationStats(
        delta=delta.numpy(),
        delta_norm_per_position=torch.linalg.vector_norm(delta, dim=1).numpy(),
        changed_positions=[int(i) for i in changed],
        max_abs_change_other_positions=max_other,
    )
