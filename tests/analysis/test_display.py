"""Display summaries: which columns are kept, and the histogram, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.analysis.display import histogram, top_rms_columns


def test_top_rms_columns_matches_numpy_and_is_sorted() -> None:
    gen = torch.Generator().manual_seed(3)
    m = torch.randn(7, 53, generator=gen) * torch.linspace(0.1, 3.0, 53)
    k = 11
    got = top_rms_columns(m, k).numpy()
    rms = np.sqrt((m.numpy().astype(np.float64) ** 2).mean(axis=0))
    expected = np.sort(np.argsort(-rms, kind="stable")[:k])
    np.testing.assert_array_equal(got, expected)
    assert list(got) == sorted(got)


def test_top_rms_prefers_live_units_and_breaks_ties_low() -> None:
    m = torch.zeros(3, 6)
    m[:, 4] = 1.0  # the only live unit
    assert top_rms_columns(m, 1).tolist() == [4]
    # all dead beyond unit 4: ties go to the lowest indices
    assert top_rms_columns(m, 3).tolist() == [0, 1, 4]


def test_top_rms_validates() -> None:
    with pytest.raises(ValueError, match="k must be in"):
        top_rms_columns(torch.zeros(2, 3), 4)
    with pytest.raises(ValueError, match=r"\[T, n\]"):
        top_rms_columns(torch.zeros(3), 1)


def test_histogram_counts_match_numpy() -> None:
    # range [0, 10] in 10 bins; the other values sit at bin centres (exact in float32)
    values = torch.tensor([0.0, 10.0, 0.5, 1.5, 1.5, 5.5, 9.5, 9.5], dtype=torch.float32)
    got = histogram(values.reshape(2, 4), bins=10)
    counts, edges = np.histogram(values.numpy().astype(np.float64), bins=10, range=(0.0, 10.0))
    np.testing.assert_allclose(got.edges, edges)
    np.testing.assert_array_equal(got.counts, counts)
    assert int(got.counts.sum()) == values.numel()


def test_histogram_of_a_constant_tensor() -> None:
    got = histogram(torch.full((3, 4), 2.0), bins=60)
    assert got.counts.tolist() == [12]
    assert got.edges.tolist() == [1.5, 2.5]


def test_histogram_validates() -> None:
    with pytest.raises(ValueError, match="bins"):
        histogram(torch.zeros(2), 0)
    with pytest.raises(ValueError, match="empty"):
        histogram(torch.zeros(0), 3)
