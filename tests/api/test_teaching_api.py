"""The teaching endpoints through HTTP, every number against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.model.attention import AttentionWeights

BASE = {"d_model": 16, "d_ff": 64, "num_tokens": 6, "seed": 0, "input_seed": 0}


def forward(client: TestClient, **body: object) -> dict:
    r = client.post("/api/forward", json={**BASE, "include_weights": True, **body})
    assert r.status_code == 200, r.text
    return r.json()


def np_softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_ln(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)


# ---- attention vs FFN ----


def test_attention_moves_every_row_ffn_only_one(client: TestClient) -> None:
    body = {**BASE, "position": 2, "scale": 1.0, "num_heads": 2, "attention_seed": 5}
    r = client.post("/api/attention-vs-ffn", json=body)
    assert r.status_code == 200, r.text
    d = r.json()
    t = 6
    attn, ffn = d["attention"], d["ffn"]
    assert attn["moved_count"] == t
    assert sum(1 for v in attn["delta_norm_per_position"] if v > 0) == t
    assert ffn["moved_count"] == 1 and ffn["changed_positions"] == [2]
    assert ffn["max_abs_change_other_positions"] == 0.0
    assert attn["max_abs_change_other_positions"] > 0
    # FFN's influence map is diagonal, bit for bit; attention's is dense.
    inf_ffn = np.array(ffn["influence"])
    assert np.count_nonzero(inf_ffn) == t
    assert np.all(np.diag(inf_ffn) > 0)
    assert np.count_nonzero(np.array(attn["influence"])) == t * t
    # Attention weights against NumPy with the same seeded projections.
    x = np.array(forward(client)["input"], dtype=np.float64)
    w = AttentionWeights.seeded(16, 5, bias=True)
    q = x @ w.w_q.numpy() + w.b_q.numpy()  # type: ignore[union-attr]
    k = x @ w.w_k.numpy() + w.b_k.numpy()  # type: ignore[union-attr]
    weights = np.array(attn["weights"])
    assert weights.shape == (2, t, t)
    for h in range(2):
        sl = slice(h * 8, (h + 1) * 8)
        ref = np_softmax(q[:, sl] @ k[:, sl].T / math.sqrt(8))
        np.testing.assert_allclose(weights[h], ref, atol=1e-5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    # Row `position` of the FFN moved exactly as /api/perturb says.
    p = client.post("/api/perturb", json={**BASE, "position": 2, "scale": 1.0}).json()
    assert ffn["delta_norm_per_position"] == p["delta_norm_per_position"]


def test_influence_skipped_when_too_costly(settings_env) -> None:  # type: ignore[no-untyped-def]
    settings_env.setenv("FFN_LAB_MAX_INFLUENCE_FLOPS", "10")
    from app.main import create_app

    with TestClient(create_app()) as c:
        d = c.post("/api/attention-vs-ffn", json={**BASE, "position": 0}).json()
    assert d["ffn"]["influence"] is None
    assert "over the limit of" in d["influence_skipped_reason"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"num_heads": 3}, "num_heads"),
        ({"num_heads": 0}, "num_heads"),
        ({"num_heads": 128, "d_model": 128}, "num_heads"),
        ({"position": 6}, "position"),
    ],
)
def test_attention_bad_input_is_422(client: TestClient, extra: dict, field: str) -> None:
    r = client.post("/api/attention-vs-ffn", json={**BASE, **extra})
    assert r.status_code == 422
    assert field in r.text


# ---- block ----


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_block_steps_match_numpy(client: TestClient, norm: str) -> None:
    r = client.post("/api/block", json={**BASE, "norm": norm})
    assert r.status_code == 200, r.text
    d = r.json()
    x = np.array(d["tensors"]["input"], dtype=np.float64)
    ffn_in = x if norm == "post" else np_ln(x)
    np.testing.assert_allclose(d["tensors"]["ffn_input"], ffn_in, atol=1e-5)
    # The FFN part is the core FFN: /api/forward on the same rows gives the same output.
    ref_ffn = forward(client, num_tokens=None, tokens=d["tensors"]["ffn_input"])["output"]
    np.testing.assert_allclose(d["tensors"]["ffn_output"], ref_ffn, atol=1e-5)
    total = x + np.array(ref_ffn)
    np.testing.assert_allclose(d["tensors"]["residual_sum"], total, atol=1e-5)
    out = np_ln(total) if norm == "post" else total
    np.testing.assert_allclose(d["tensors"]["output"], out, atol=1e-4)
    assert d["shapes"]["w2"] == [64, 16] and d["shapes"]["ffn_output"] == [6, 16]
    if norm == "post":
        np.testing.assert_allclose(d["row_mean"]["output"], 0.0, atol=1e-5)
        np.testing.assert_allclose(d["row_std"]["output"], 1.0, atol=1e-3)
        assert d["steps"][-1] == "output"
    else:
        assert "ffn_input" in d["steps"]
    np.testing.assert_allclose(d["row_norm"]["input"], np.linalg.norm(x, axis=1), rtol=1e-5)


def test_block_unknown_norm_is_422(client: TestClient) -> None:
    r = client.post("/api/block", json={**BASE, "norm": "middle"})
    assert r.status_code == 422 and "norm" in r.text


# ---- variants ----


def test_variants_same_input_same_w1(client: TestClient) -> None:
    r = client.post("/api/variants", json={**BASE, "activation": "gelu"})
    assert r.status_code == 200, r.text
    d = r.json()
    names = [v["name"] for v in d["variants"]]
    assert names == ["relu", "gelu", "silu", "swiglu", "geglu", "geglu_tanh"]
    assert d["shared_w1_max_abs_diff"] == 0.0
    f = forward(client, activation="relu")
    pre = np.array(f["pre_activation"], dtype=np.float64)
    relu = d["variants"][0]
    # ReLU's exact zeros are the non-positive pre-activations.
    assert relu["sparsity"]["overall"] == pytest.approx(float((pre <= 0).mean()), abs=1e-6)
    assert relu["fractions"]["exact_zero"] == pytest.approx(float((pre <= 0).mean()), abs=1e-6)
    by_name = {v["name"]: v for v in d["variants"]}
    assert by_name["gelu"]["fractions"]["exact_zero"] < relu["fractions"]["exact_zero"]
    assert by_name["relu"]["params"]["total"] == 2 * 16 * 64 + 64 + 16
    assert by_name["swiglu"]["params"]["total"] == 3 * 16 * 64 + 2 * 64 + 16
    # Scatter: y is the curve at z, e.g. SiLU(z) = z / (1 + e^-z).
    z = np.array(by_name["silu"]["scatter"]["z"], dtype=np.float64)
    np.testing.assert_allclose(by_name["silu"]["scatter"]["y"], z / (1 + np.exp(-z)), atol=1e-5)
    np.testing.assert_allclose(np.sort(z), np.sort(pre.ravel()), atol=1e-6)
    assert d["llama"]["d_ff_4096"] == 11008
    assert d["llama"]["d_ff_rule"] == 256 * math.ceil(int(2 * 4 * 16 / 3) / 256)


def test_variants_match_params(client: TestClient) -> None:
    d = client.post("/api/variants", json={**BASE, "match_params": True}).json()
    plain = d["variants"][0]["params"]["total"]
    for v in d["variants"]:
        if v["gated"]:
            assert v["d_ff"] == d["llama"]["matched_d_ff"] == 42
            # 3 * 16 * 42 + 2 * 42 + 16 = 2116 vs 2128: within one hidden unit's cost.
            assert abs(v["params"]["total"] - plain) <= 3 * 16 + 2
        else:
            assert v["d_ff"] == 64


def test_variants_too_large_for_gated_is_422(client: TestClient) -> None:
    r = client.post("/api/variants", json={**BASE, "d_model": 4096, "d_ff": 16384})
    assert r.status_code == 422 and "the limit is" in r.text and "max_params" not in r.text


def test_variants_with_hand_weights(client: TestClient) -> None:
    w = {
        "w1": [[1.0, -1.0], [0.0, 2.0]],
        "b1": [0.0, 1.0],
        "w2": [[1.0, 0.0], [0.0, 1.0]],
        "b2": [0.0, 0.0],
    }
    body = {"d_model": 2, "d_ff": 2, "tokens": [[1.0, 1.0], [-1.0, 0.0]], "weights": w}
    d = client.post("/api/variants", json=body).json()
    relu = d["variants"][0]
    # x W1 + b1 = [[1, 2], [-1, 2]] -> one exact zero of four.
    assert relu["fractions"]["exact_zero"] == 0.25
    assert d["shared_w1_max_abs_diff"] == 0.0


# ---- budget and conv1d ----


def test_budget_counts(client: TestClient) -> None:
    body = {"d_model": 64, "d_ff": 256, "num_tokens": 10, "bias": False, "num_heads": 4}
    d = client.post("/api/budget", json=body).json()
    assert d["ffn"]["params"]["total"] == 8 * 64**2
    assert d["attention"]["params"]["total"] == 4 * 64**2
    assert d["params_ratio"] == 2.0
    assert d["ffn"]["flops"]["total"] == 2 * 10 * 64 * 256 * 2 + 10 * 256
    assert d["attention"]["flops"]["total"] == 8 * 10 * 64**2 + 4 * 10 * 10 * 64 + 4 * 100
    assert set(d["series"]["ffn_params"]) == {8 * 64**2}
    r = client.post("/api/budget", json={**body, "num_heads": 5})
    assert r.status_code == 422 and "num_heads" in r.text


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_conv1d_check(client: TestClient, activation: str) -> None:
    d = client.post("/api/conv1d-check", json={**BASE, "activation": activation}).json()
    assert 0.0 <= d["max_abs_diff"] < 1e-5
    assert d["conv_shapes"]["conv1"] == [64, 16, 1]
    assert d["conv_shapes"]["conv2"] == [16, 64, 1]
    assert ("conv_gate" in d["conv_shapes"]) == (activation == "swiglu")


# ---- dropout ----


def test_dropout_train_and_eval(client: TestClient) -> None:
    body = {**BASE, "dropout": 0.25, "dropout_seed": 3}
    d = client.post("/api/dropout", json=body).json()
    hidden = np.array(d["hidden"], dtype=np.float64)
    dropped = np.array(d["dropped"], dtype=bool)
    kept = np.array(d["kept"], dtype=np.float64)
    np.testing.assert_allclose(kept[~dropped], hidden[~dropped] / 0.75, rtol=1e-6)
    assert np.all(kept[dropped] == 0)
    assert d["scale"] == pytest.approx(1 / 0.75)
    assert d["dropped_fraction"] == pytest.approx(dropped.mean())
    assert 0.1 < d["dropped_fraction"] < 0.4
    assert d["eval_identity_max_abs_diff"] == 0.0
    assert d["train_vs_eval_max_abs_diff"] > 0
    assert d["other_seed_max_abs_diff"] > 0
    # The hidden tensor is the plain forward's hidden; the output is kept · W2 + b2.
    f = forward(client)
    np.testing.assert_allclose(hidden, f["hidden"], atol=0)
    w2, b2 = np.array(f["weights"]["w2"]), np.array(f["weights"]["b2"])
    train_out = kept @ w2 + b2
    eval_out = np.array(f["output"])
    assert np.abs(train_out - eval_out).max() == pytest.approx(
        d["train_vs_eval_max_abs_diff"], rel=1e-4
    )
    other = client.post("/api/dropout", json={**body, "dropout_seed": 4}).json()
    assert other["dropped"] != d["dropped"]


def test_dropout_zero_drops_nothing(client: TestClient) -> None:
    d = client.post("/api/dropout", json={**BASE, "dropout": 0.0}).json()
    assert d["dropped_fraction"] == 0.0 and d["train_vs_eval_max_abs_diff"] == 0.0
    r = client.post("/api/dropout", json={**BASE, "dropout": 1.0})
    assert r.status_code == 422 and "dropout" in r.text


# ---- misconceptions ----


@pytest.mark.parametrize(("activation", "layers"), [("gelu", 2), ("swiglu", 3)])
def test_misconceptions(client: TestClient, activation: str, layers: int) -> None:
    body = {**BASE, "activation": activation, "position": 3, "scale": 2.0}
    d = client.post("/api/misconceptions", json=body).json()
    assert len(d["layers"]) == layers
    assert d["layers"][0]["shape"] == [16, 64] and d["layers"][-1]["shape"] == [64, 16]
    assert d["additivity_gap"] > 1e-3
    assert d["no_activation_gap"] < 1e-4
    assert d["mixing"]["changed_positions"] == [3]
    assert d["mixing"]["max_abs_change_other_positions"] == 0.0
    shared = d["shared_weights"]
    formula = 2 * 16 * 64 + 64 + 16 + (16 * 64 + 64 if layers == 3 else 0)
    assert shared["params_measured"] == [formula] * len(shared["tokens"])
    assert shared["params_formula"] == formula
    assert shared["tokens"][0] == 1 and shared["tokens"][-1] == 64
    assert shared["flops"] == sorted(shared["flops"]) and shared["flops"][0] < shared["flops"][-1]
    assert shared["row_by_row_max_abs_diff"] < 1e-5
    assert shared["row_by_row_positions"] == list(range(6))  # small: every row run alone


def test_misconceptions_big_sizes_run_spread_rows_alone(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the weight-read budget only spread rows (first and last included) are run
    alone, and the answer names them."""
    from app.lab import contrast

    params = 2 * 16 * 64 + 64 + 16
    monkeypatch.setattr(contrast, "ROWS_ALONE_WEIGHT_READS", 3 * params)
    body = {**BASE, "num_tokens": 8, "position": 1, "scale": 1.0}
    d = client.post("/api/misconceptions", json=body).json()
    assert d["shared_weights"]["row_by_row_positions"] == [0, 4, 7]
    assert d["shared_weights"]["row_by_row_max_abs_diff"] < 1e-5
    assert [contrast._rows_alone(t, 10) for t in (1, 2, 5)] == [[0], [0, 1], [0, 1, 2, 3, 4]]
    assert contrast._rows_alone(8, 10**12) == [0, 7]  # never fewer than the first and last


@pytest.mark.parametrize(
    "endpoint",
    [
        "attention-vs-ffn",
        "block",
        "variants",
        "budget",
        "conv1d-check",
        "dropout",
        "misconceptions",
    ],
)
def test_teaching_views_refuse_the_pretrained_model_clearly(client, endpoint):
    """They would otherwise silently run a seeded FFN while the page shows MiniLM."""
    body = {"model": "minilm-l6", "layer": 1, "text": "The cat sat."}
    r = client.post(f"/api/{endpoint}", json=body)
    assert r.status_code == 422
    assert "model = 'minilm-l6' is not supported here" in r.text


def test_teaching_views_never_switch_the_cached_models_mode(client: TestClient) -> None:
    """The cached FFN is shared by requests: a view that needs eval mode must not flip it."""
    body = {**BASE, "activation": "swiglu", "mode": "train", "dropout": 0.3}
    before = forward(client, **{k: v for k, v in body.items() if k not in BASE})["output"]
    for endpoint in ("conv1d-check", "block", "dropout", "variants"):
        assert client.post(f"/api/{endpoint}", json=body).status_code == 200, endpoint
    after = forward(client, **{k: v for k, v in body.items() if k not in BASE})["output"]
    assert after == before
