"""POST /api/perturb: only the nudged position's output row changes, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.model import ACTIVATIONS


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("bias", [True, False])
def test_other_positions_are_exactly_unchanged(client, activation, bias):
    body = {
        "d_model": 32,
        "d_ff": 128,
        "activation": activation,
        "bias": bias,
        "num_tokens": 9,
        "position": 4,
        "scale": 2.5,
    }
    r = client.post("/api/perturb", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["max_abs_change_other_positions"] == 0.0
    assert data["changed_positions"] == [4]
    norms = data["delta_norm_per_position"]
    assert norms[4] > 0 and all(n == 0.0 for i, n in enumerate(norms) if i != 4)
    out, out_p = np.asarray(data["output"]), np.asarray(data["output_perturbed"])
    np.testing.assert_array_equal(np.delete(out, 4, axis=0), np.delete(out_p, 4, axis=0))
    np.testing.assert_allclose(np.linalg.norm(out_p - out, axis=1), norms, rtol=1e-5, atol=1e-6)
    nudge = np.asarray(data["input_perturbed"]) - np.asarray(data["input"])
    assert np.linalg.norm(nudge[4]) == pytest.approx(2.5, rel=1e-5)
    assert not np.delete(nudge, 4, axis=0).any()


def test_explicit_delta_is_added_to_the_token(client):
    body = {
        "d_model": 3,
        "d_ff": 6,
        "tokens": [[0, 0, 0], [1, 1, 1]],
        "position": 1,
        "delta": [0.5, -0.5, 2],
    }
    data = client.post("/api/perturb", json=body).json()
    assert data["input_perturbed"] == [[0, 0, 0], [1.5, 0.5, 3]]
    assert data["position"] == 1
    assert data["changed_positions"] == [1]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    d_model=st.integers(1, 48),
    d_ff=st.integers(1, 160),
    t=st.integers(1, 12),
    activation=st.sampled_from(list(ACTIVATIONS)),
    seed=st.integers(0, 1000),
    data=st.data(),
)
def test_property_through_the_api(client, d_model, d_ff, t, activation, seed, data):  # type: ignore[no-untyped-def]
    position = data.draw(st.integers(0, t - 1))
    body = {
        "d_model": d_model,
        "d_ff": d_ff,
        "activation": activation,
        "seed": seed,
        "input_seed": seed + 1,
        "num_tokens": t,
        "position": position,
        "scale": 1.0,
    }
    answer = client.post("/api/perturb", json=body).json()
    assert answer["max_abs_change_other_positions"] == 0.0
    assert set(answer["changed_positions"]) <= {position}
