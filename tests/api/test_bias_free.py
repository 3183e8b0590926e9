"""Submitted weights with "bias": false (LLaMA/T5 style) on every endpoint that takes them,
over HTTP, against the NumPy reference: a 200 and the right numbers, never a 500."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests import reference

D_MODEL, D_FF = 4, 8
RNG = np.random.default_rng(10)
TOKENS = RNG.normal(size=(3, D_MODEL)).round(3)
W = {
    "w1": RNG.normal(scale=0.5, size=(D_MODEL, D_FF)).round(3),
    "w2": RNG.normal(scale=0.5, size=(D_FF, D_MODEL)).round(3),
    "w_gate": RNG.normal(scale=0.5, size=(D_MODEL, D_FF)).round(3),
}
CASES = ["relu", "gelu", "swiglu", "geglu", "geglu_tanh"]


def _body(activation: str, **more: object) -> dict[str, object]:
    names = ("w1", "w2", "w_gate") if activation in reference.GATE_OF else ("w1", "w2")
    return {
        "d_model": D_MODEL,
        "d_ff": D_FF,
        "activation": activation,
        "bias": False,
        "tokens": TOKENS.tolist(),
        "weights": {name: W[name].tolist() for name in names},
        **more,
    }


def _ref(activation: str, x: np.ndarray = TOKENS) -> dict[str, np.ndarray]:
    gate = W["w_gate"] if activation in reference.GATE_OF else None
    return reference.ffn(x, W["w1"], None, W["w2"], None, activation, w_gate=gate)


def _post(client: TestClient, path: str, body: dict[str, object]) -> dict:
    r = client.post(path, json=body)
    assert r.status_code == 200, f"{path}: {r.status_code} {r.text[:300]}"
    return r.json()


@pytest.mark.parametrize("activation", CASES)
def test_forward(client: TestClient, activation: str) -> None:
    d = _post(client, "/api/forward", _body(activation, include_weights=True))
    ref = _ref(activation)
    for name in ("pre_activation", "hidden", "output"):
        np.testing.assert_allclose(d[name], ref[name], atol=1e-5, err_msg=name)
    assert d["config"]["bias"] is False and d["config"]["weights_source"] == "submitted"
    assert set(d["weights"]) == ({"w1", "w2", "w_gate"} if "glu" in activation else {"w1", "w2"})
    assert d["params"]["total"] == sum(W[k].size for k in d["weights"])


@pytest.mark.parametrize("activation", CASES)
def test_perturb(client: TestClient, activation: str) -> None:
    delta = [0.5, -0.25, 0.0, 1.0]
    d = _post(client, "/api/perturb", _body(activation, position=1, delta=delta))
    nudged = TOKENS.copy()
    nudged[1] += delta
    np.testing.assert_allclose(d["output"], _ref(activation)["output"], atol=1e-5)
    np.testing.assert_allclose(d["output_perturbed"], _ref(activation, nudged)["output"], atol=1e-5)
    assert d["changed_positions"] == [1]


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_snapshot(client: TestClient, activation: str) -> None:
    r = client.post("/api/snapshot", json=_body(activation, position=0, scale=1.0))
    assert r.status_code == 200, r.text[:300]
    html = r.text
    start = html.index('"plot-output"')
    data, _ = json.JSONDecoder().raw_decode(html, html.index("[", start))
    z = data[0]["z"]
    if isinstance(z, dict):  # plotly 6 writes arrays as base64 typed arrays
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    expected = _ref(activation)["output"]
    np.testing.assert_allclose(np.asarray(z).reshape(expected.shape), expected, atol=1e-4)


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_attention_vs_ffn(client: TestClient, activation: str) -> None:
    delta = [1.0, 0.0, 0.0, -1.0]
    d = _post(client, "/api/attention-vs-ffn", _body(activation, position=2, delta=delta))
    nudged = TOKENS.copy()
    nudged[2] += delta
    change = _ref(activation, nudged)["output"] - _ref(activation)["output"]
    np.testing.assert_allclose(
        d["ffn"]["delta_norm_per_position"], np.linalg.norm(change, axis=1), atol=1e-5
    )
    assert d["ffn"]["changed_positions"] == [2]


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_block(client: TestClient, activation: str, norm: str) -> None:
    d = _post(client, "/api/block", _body(activation, norm=norm))

    def ln(v: np.ndarray) -> np.ndarray:
        return (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5)

    if norm == "post":
        expected = ln(TOKENS + _ref(activation)["output"])
    else:
        expected = TOKENS + _ref(activation, ln(TOKENS))["output"]
    np.testing.assert_allclose(d["tensors"]["output"], expected, atol=1e-4)
    assert "b1" not in d["shapes"] and "b2" not in d["shapes"]


@pytest.mark.parametrize("activation", ["relu", "geglu"])
def test_conv1d_check(client: TestClient, activation: str) -> None:
    d = _post(client, "/api/conv1d-check", _body(activation))
    assert d["max_abs_diff"] < 1e-5
    assert set(d["linear_shapes"]) == (
        {"w1", "w2", "w_gate"} if "glu" in activation else {"w1", "w2"}
    )


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_dropout(client: TestClient, activation: str) -> None:
    d = _post(client, "/api/dropout", _body(activation, dropout=0.5, dropout_seed=2))
    np.testing.assert_allclose(d["hidden"], _ref(activation)["hidden"], atol=1e-5)
    dropped = np.asarray(d["dropped"], dtype=bool)
    expected = np.where(dropped, 0.0, _ref(activation)["hidden"] * 2.0)
    np.testing.assert_allclose(d["kept"], expected, atol=1e-5)
    assert d["eval_identity_max_abs_diff"] == 0.0


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_misconceptions(client: TestClient, activation: str) -> None:
    d = _post(client, "/api/misconceptions", _body(activation, position=1, scale=1.0))
    assert d["mixing"]["changed_positions"] == [1]
    assert set(d["shared_weights"]["param_shapes"]) <= {"w1", "w2", "w_gate"}
    zero = np.zeros_like(TOKENS)
    flipped = TOKENS[::-1]
    gap = np.abs(
        _ref(activation, TOKENS + flipped)["output"]
        - _ref(activation)["output"]
        - _ref(activation, flipped)["output"]
        + _ref(activation, zero)["output"]
    ).max()
    assert d["additivity_gap"] == pytest.approx(gap, abs=1e-5)
    if activation == "relu":
        assert d["no_activation_bilinear_gap"] is None
    else:  # without SiLU the gated FFN is bilinear in x: additivity fails by the cross terms

        def g(x: np.ndarray) -> np.ndarray:
            return ((x @ W["w_gate"]) * (x @ W["w1"])) @ W["w2"]

        bilinear = np.abs(g(TOKENS + flipped) - g(TOKENS) - g(flipped) + g(zero)).max()
        assert bilinear > 0.1
        assert d["no_activation_bilinear_gap"] == pytest.approx(bilinear, rel=1e-4)


def test_variants_on_bias_free_plain_weights(client: TestClient) -> None:
    """The variants share the submitted W1 (the gated ones add a seeded bias-free W_gate)."""
    d = _post(client, "/api/variants", _body("relu"))
    by_name = {v["name"]: v for v in d["variants"]}
    assert len(by_name) == 6 and d["shared_w1_max_abs_diff"] == 0.0
    for name in ("relu", "gelu"):
        hidden = _ref(name)["hidden"]
        assert by_name[name]["fractions"]["negative"] == pytest.approx((hidden < 0).mean())
        assert by_name[name]["fractions"]["exact_zero"] == pytest.approx((hidden == 0).mean())
    assert by_name["swiglu"]["params"]["total"] == 3 * D_MODEL * D_FF  # no biases anywhere
