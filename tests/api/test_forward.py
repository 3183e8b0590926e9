"""POST /api/forward through HTTP, numbers against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

from app.model import ACTIVATIONS
from tests import reference


def _arr(x):  # type: ignore[no-untyped-def]
    return None if x is None else np.asarray(x, dtype=np.float64)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_forward_matches_reference(client, activation):
    body = {
        "d_model": 5,
        "d_ff": 13,
        "activation": activation,
        "num_tokens": 4,
        "seed": 9,
        "input_seed": 2,
        "include_weights": True,
    }
    r = client.post("/api/forward", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    w = data["weights"]
    ref = reference.ffn(
        _arr(data["input"]),
        _arr(w["w1"]),
        _arr(w["b1"]),
        _arr(w["w2"]),
        _arr(w["b2"]),
        activation,
        _arr(w.get("w_gate")),
        _arr(w.get("b_gate")),
    )
    for name in ("pre_activation", "hidden", "output"):
        np.testing.assert_allclose(data[name], ref[name], atol=1e-5, rtol=1e-5)
    gated = ACTIVATIONS[activation].gated
    assert data["config"]["gated"] is gated
    assert (data["up"] is not None) is gated
    assert data["shapes"]["hidden"] == [4, 13]
    assert data["shapes"]["output"] == [4, 5]
    assert data["shapes"]["w1"] == [5, 13]
    assert data["shapes"]["w2"] == [13, 5]
    assert data["params"]["total"] == sum(v for k, v in data["params"].items() if k != "total")
    assert data["flops"]["total"] > 0
    assert data["dropped"] is None


def test_same_seed_same_weights_across_activations(client):
    got = {}
    for activation in ("relu", "gelu", "swiglu"):
        body = {"d_model": 4, "d_ff": 8, "activation": activation, "include_weights": True}
        got[activation] = client.post("/api/forward", json=body).json()["weights"]
    assert got["relu"]["w1"] == got["gelu"]["w1"] == got["swiglu"]["w1"]
    assert got["relu"]["w2"] == got["swiglu"]["w2"]


def test_submitted_tokens_and_weights_hand_example(client):
    body = {
        "d_model": 2,
        "d_ff": 4,
        "activation": "relu",
        "tokens": [[1, 2], [-1, 1]],
        "weights": {
            "w1": [[1, -1, 0, 2], [0, 1, -1, 1]],
            "b1": [0, 0, 1, -1],
            "w2": [[1, 0], [0, 1], [1, 1], [-1, 0]],
            "b2": [0, 0.5],
        },
    }
    data = client.post("/api/forward", json=body).json()
    assert data["pre_activation"] == [[1, 1, -1, 3], [-1, 2, 0, -2]]
    assert data["hidden"] == [[1, 1, 0, 3], [0, 2, 0, 0]]
    assert data["output"] == [[-2, 1.5], [0, 2.5]]
    assert data["config"]["weights_source"] == "submitted"
    assert data["config"]["input_seed"] is None
    assert data["sparsity"]["per_token"] == [0.25, 0.75]
    assert data["sparsity"]["dead_neurons"] == [2]
    assert data["sparsity"]["rule"] == "exact_zero"


def test_sparsity_threshold_is_reported(client):
    body = {"d_model": 8, "d_ff": 32, "activation": "gelu", "sparsity_threshold": 0.05}
    data = client.post("/api/forward", json=body).json()
    hidden = np.asarray(data["hidden"])
    assert data["sparsity"]["threshold"] == 0.05
    assert data["sparsity"]["overall"] == pytest.approx((np.abs(hidden) < 0.05).mean())


def test_train_mode_dropout_marks_units_and_eval_is_identity(client):
    base = {"d_model": 8, "d_ff": 64, "num_tokens": 6, "dropout": 0.5}
    evaluated = client.post("/api/forward", json=base).json()
    plain = client.post("/api/forward", json={**base, "dropout": 0.0}).json()
    assert evaluated["output"] == plain["output"]
    assert evaluated["dropped"] is None
    trained = client.post("/api/forward", json={**base, "mode": "train", "dropout_seed": 1}).json()
    dropped = np.asarray(trained["dropped"])
    assert dropped.shape == (6, 64) and 0.3 < dropped.mean() < 0.7
    assert trained["hidden"] == plain["hidden"]  # hidden is before dropout
    assert trained["output"] != plain["output"]
    again = client.post("/api/forward", json={**base, "mode": "train", "dropout_seed": 1}).json()
    assert again["output"] == trained["output"]


def test_default_request_is_eight_random_tokens(client):
    data = client.post("/api/forward", json={}).json()
    assert data["config"]["num_tokens"] == 8
    assert data["shapes"]["input"] == [8, 16]
