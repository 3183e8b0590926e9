"""Row-by-row comparison of two outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.analysis import compare_outputs


def test_only_changed_rows_are_reported():
    a = torch.zeros(4, 3)
    b = a.clone()
    b[2] = torch.tensor([3.0, 0.0, -4.0])
    s = compare_outputs(a, b, position=2)
    assert s.changed_positions == [2]
    np.testing.assert_allclose(s.delta_norm_per_position, [0, 0, 5, 0])
    assert s.max_abs_change_other_positions == 0.0
    b[0, 1] = 1e-30
    s = compare_outputs(a, b, position=2)
    assert s.changed_positions == [0, 2]
    assert s.max_abs_change_other_positions == pytest.approx(1e-30)


def test_single_token_has_no_other_positions():
    s = compare_outputs(torch.zeros(1, 2), torch.ones(1, 2), 0)
    assert s.max_abs_change_other_positions == 0.0
    assert s.changed_positions == [0]


@pytest.mark.parametrize("position", [-1, 4])
def test_position_out_of_range(position):
    with pytest.raises(ValueError, match=r"position must be in \[0, 3\]"):
        compare_outputs(torch.zeros(4, 2), torch.zeros(4, 2), position)


def test_shapes_must_match():
    with pytest.raises(ValueError, match="outputs must both be"):
        compare_outputs(torch.zeros(4, 2), torch.zeros(3, 2), 0)
