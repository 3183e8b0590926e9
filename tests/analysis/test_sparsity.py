"""Sparsity statistics against NumPy, with the stated rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.analysis import sparsity
from app.analysis.sparsity import inactive_mask


def test_relu_counts_exact_zeros():
    hidden = torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 1e-9]])
    s = sparsity(hidden, "relu")
    assert s.rule == "exact_zero" and s.threshold == 0.0
    np.testing.assert_allclose(s.per_token, [0.75, 0.5, 0.75])
    np.testing.assert_allclose(s.per_neuron, [0.0, 2 / 3, 0.0, 2 / 3])
    assert s.overall == pytest.approx(8 / 12)
    assert s.dead_neurons == [0, 2]


def test_smooth_activation_uses_threshold():
    h = np.random.default_rng(0).normal(size=(9, 31)).astype(np.float32) * 0.05
    s = sparsity(torch.from_numpy(h), "gelu", threshold=0.02)
    inactive = np.abs(h) < 0.02
    assert s.rule == "abs_below_threshold" and s.threshold == 0.02
    np.testing.assert_allclose(s.per_token, inactive.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(s.per_neuron, 1 - inactive.mean(axis=0), rtol=1e-6)
    assert s.overall == pytest.approx(inactive.mean())
    assert s.dead_neurons == [int(i) for i in np.flatnonzero(inactive.all(axis=0))]


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        inactive_mask(torch.zeros(2, 2), "gelu", -1.0)
    with pytest.raises(ValueError, match=r"hidden must be \[T, d_ff\]"):
        sparsity(torch.zeros(2, 2, 2), "relu")
