"""Sparsity statistics against NumPy, with the stated rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from app.analysis import sparsity
from app.analysis.sparsity import SparsityStats, inactive_mask


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


def _torch_reference(hidden: torch.Tensor, activation: str, threshold: float) -> SparsityStats:
    """The statistics as torch computes them (the implementation before the NumPy one)."""
    inactive, used, rule = inactive_mask(hidden, activation, threshold)
    f = inactive.to(torch.float32)
    return SparsityStats(
        per_token=f.mean(dim=1).numpy(),
        per_neuron=(1.0 - f.mean(dim=0)).numpy(),
        overall=float(f.mean()),
        dead_neurons=[int(i) for i in torch.nonzero(inactive.all(dim=0)).flatten()],
        threshold=used,
        rule=rule,
    )


@hyp_settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 64),
    st.integers(1, 700),
    st.sampled_from(["relu", "gelu", "swiglu"]),
    st.sampled_from([0.0, 0.01, 0.1, 0.5, 1e-7]),
    st.integers(0, 2**31 - 1),
)
def test_numpy_statistics_equal_torch_bit_for_bit(
    tokens: int, units: int, activation: str, threshold: float, seed: int
) -> None:
    gen = torch.Generator().manual_seed(seed)
    hidden = torch.randn(tokens, units, generator=gen) * 0.05
    hidden[hidden.abs() < 0.02] = 0.0  # exact zeros, as ReLU gives
    hidden[0, : units // 3] = threshold  # values exactly at the threshold
    hidden[:, units // 2 :] = torch.where(hidden[:, units // 2 :] > 0, -0.0, 0.0)  # dead units
    got = sparsity(hidden, activation, threshold)
    want = _torch_reference(hidden, activation, threshold)
    assert got.per_token.dtype == want.per_token.dtype == np.float32
    assert got.per_token.tobytes() == want.per_token.tobytes()
    assert got.per_neuron.tobytes() == want.per_neuron.tobytes()
    assert got.overall == want.overall
    assert got.dead_neurons == want.dead_neurons
    assert (got.threshold, got.rule) == (want.threshold, want.rule)
