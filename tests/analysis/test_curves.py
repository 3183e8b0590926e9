"""Activation curves against the closed-form definitions in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.analysis.compare import hidden_fractions, max_abs_diff
from app.analysis.curves import activation_curves
from app.model.activations import ACTIVATIONS

ERF = np.vectorize(math.erf)


def reference(name: str, z: np.ndarray) -> np.ndarray:
    gelu = 0.5 * z * (1 + ERF(z / math.sqrt(2)))
    silu = z / (1 + np.exp(-z))
    tanh_gelu = 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
    table = {
        "relu": np.maximum(z, 0),
        "gelu": gelu,
        "gelu_tanh": tanh_gelu,
        "silu": silu,
        "swiglu": silu,
        "geglu": gelu,
        "geglu_tanh": tanh_gelu,
    }
    return table[name]


def test_every_registry_curve_matches_its_formula() -> None:
    data = activation_curves(-5, 5, 101)
    z = np.asarray(data["z"], dtype=np.float64)
    curves = data["curves"]
    assert isinstance(curves, dict) and set(curves) == set(ACTIVATIONS)
    for name, values in curves.items():
        np.testing.assert_allclose(values, reference(name, z), atol=1e-5, err_msg=name)


def test_bad_grid_raises() -> None:
    with pytest.raises(ValueError):
        activation_curves(1, 1)


def test_hidden_fractions_and_max_abs_diff() -> None:
    import torch

    h = torch.tensor([[0.0, -0.005, 0.5, -2.0]])
    f = hidden_fractions(h, 0.01)
    assert f == {"exact_zero": 0.25, "near_zero": 0.5, "negative": 0.5}
    assert max_abs_diff(h, h.clone()) == 0.0
    with pytest.raises(ValueError):
        max_abs_diff(h, h.T)
