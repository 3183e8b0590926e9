"""Activation curves z -> act(z) for every activation in the registry.

For the gated variants (SwiGLU, GeGLU) the curve is the gate's element-wise function
(SiLU, GELU); the hidden unit is that value times the up-projection x W1 + b1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import torch

from app.model.activations import ACTIVATIONS, get_activation


def activation_values(name: str, z: torch.Tensor) -> torch.Tensor:
    """act(z) element-wise with the registry's `torch.nn` module.

    Raises:
        ValueError: for an unknown activation (the message lists the supported ones).
    """
    module = get_activation(name).factory()
    with torch.inference_mode():
        out: torch.Tensor = module(z)
    return out


def activation_curves(lo: float = -4.0, hi: float = 4.0, points: int = 161) -> dict[str, object]:
    """A grid of z in [lo, hi] and act(z) for each registry activation.

    Returns:
        {"z": float32 [points], "curves": {name: float32 [points]}}.

    Raises:
        ValueError: if lo >= hi or points < 2.
    """
    if not lo < hi or points < 2:
        raise ValueError(f"need lo < hi and points >= 2, got {lo}, {hi}, {points}")
    z = torch.linspace(lo, hi, points)
    curves: dict[str, npt.NDArray[np.float32]] = {
        name: activation_values(name, z).numpy() for name in ACTIVATIONS
    }
    return {"z": z.numpy(), "curves": curves}
