"""POST /api/stack over HTTP, every number against an independent NumPy reference (float64)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.model.attention import AttentionWeights
from app.model.ffn import FFNWeights
from tests.reference import ffn as ref_ffn

BASE = {"d_model": 16, "d_ff": 64, "num_tokens": 6, "seed": 3, "input_seed": 1}


def post(client: TestClient, **body: object) -> dict:
    r = client.post("/api/stack", json={**BASE, **body})
    assert r.status_code == 200, r.text
    return r.json()


def tokens(client: TestClient) -> np.ndarray:
    r = client.post("/api/forward", json=BASE)
    assert r.status_code == 200, r.text
    return np.array(r.json()["input"], dtype=np.float64)


def np_ln(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)


def np_attention(x: np.ndarray, seed: int, stream: str, heads: int) -> np.ndarray:
    seeded = AttentionWeights.seeded(16, seed, bias=True, stream=stream)
    w = {k: v.double().numpy() for k, v in vars(seeded).items()}
    q, k, v = (x @ w[f"w_{n}"] + w[f"b_{n}"] for n in "qkv")
    d_k = 16 // heads
    out = []
    for h in range(heads):
        sl = slice(h * d_k, (h + 1) * d_k)
        s = q[:, sl] @ k[:, sl].T / math.sqrt(d_k)
        a = np.exp(s - s.max(1, keepdims=True))
        out.append((a / a.sum(1, keepdims=True)) @ v[:, sl])
    return np.concatenate(out, axis=1) @ w["w_o"] + w["b_o"]


def reference_stack(
    x: np.ndarray,
    n_layers: int,
    seed: int,
    *,
    shared: bool,
    attention: bool,
    norm: str,
    heads: int = 1,
) -> list[dict[str, np.ndarray]]:
    """The stack from the formulas: layer i's weights from stream layer{i}.* (layer 0's when
    shared); post: LN(x + f(x)), pre: x + f(LN(x))."""
    out = []
    for i in range(n_layers):
        j = 0 if shared else i
        fw = FFNWeights.seeded(16, 64, seed, gated=False, bias=True, stream=f"layer{j}.weights")
        w = {k: v.double().numpy() for k, v in fw.named().items()}
        layer_in = x
        if attention:
            a_stream = f"layer{j}.attention"
            if norm == "post":
                x = np_ln(x + np_attention(x, seed, a_stream, heads))
            else:
                x = x + np_attention(np_ln(x), seed, a_stream, heads)
        residual = x
        if norm == "post":
            f = ref_ffn(x, w["w1"], w["b1"], w["w2"], w["b2"], "relu")
            x = np_ln(x + f["output"])
        else:
            f = ref_ffn(np_ln(x), w["w1"], w["b1"], w["w2"], w["b2"], "relu")
            x = x + f["output"]
        ratio = np.linalg.norm(f["output"], axis=1) / np.linalg.norm(residual, axis=1)
        out.append({"input": layer_in, "hidden": f["hidden"], "output": x, "ratio": ratio})
    return out


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_layers_match_numpy_reference(client: TestClient, attention: bool, norm: str) -> None:
    n = 4
    d = post(client, n_layers=n, attention=attention, norm=norm, num_heads=2)
    ref = reference_stack(
        tokens(client), n, 3, shared=False, attention=attention, norm=norm, heads=2
    )
    assert len(d["layers"]) == n
    for i, (layer, r) in enumerate(zip(d["layers"], ref, strict=True)):
        assert layer["index"] == i and layer["weights_stream"] == f"layer{i}.weights"
        np.testing.assert_allclose(layer["update_ratio"], r["ratio"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            layer["output_row_norms"], np.linalg.norm(r["output"], axis=1), rtol=1e-4, atol=1e-5
        )
        inactive = r["hidden"] == 0
        # float32 vs float64 may flip a unit sitting at 0; allow one in T x d_ff
        assert abs(layer["sparsity"]["overall"] - inactive.mean()) <= 1 / inactive.size + 1e-7
        assert (layer["attention_update_ratio"] is not None) == attention
    np.testing.assert_allclose(d["output"], ref[-1]["output"], rtol=1e-4, atol=1e-4)
    # Each layer has its own weights: layers differ, and the reference's per-layer seeds fit.
    assert d["layers"][0]["update_ratio"] != d["layers"][1]["update_ratio"]


def test_param_counts_own_and_shared(client: TestClient) -> None:
    per_ffn = 16 * 64 + 64 + 64 * 16 + 16  # w1, b1, w2, b2
    attention = 4 * 16 * 16 + 4 * 16
    for n in (1, 5, 12):
        own = post(client, n_layers=n)
        assert own["params_total"] == n * per_ffn
        assert all(layer["params"]["total"] == per_ffn for layer in own["layers"])
        shared = post(client, n_layers=n, share_weights=True)
        assert shared["params_total"] == per_ffn
        assert {layer["weights_stream"] for layer in shared["layers"]} == {"layer0.weights"}
        full = post(client, n_layers=n, attention=True)
        assert full["attention_params_total"] == n * attention
        assert (
            post(client, n_layers=n, attention=True, share_weights=True)["attention_params_total"]
            == attention
        )
    assert post(client, n_layers=2, activation="swiglu")["params_total"] == 2 * (
        per_ffn + 16 * 64 + 64
    )


def test_shared_stack_repeats_layer_zero(client: TestClient) -> None:
    n = 5
    shared = post(client, n_layers=n, share_weights=True)
    ref = reference_stack(tokens(client), n, 3, shared=True, attention=False, norm="post")
    np.testing.assert_allclose(shared["output"], ref[-1]["output"], rtol=1e-4, atol=1e-4)
    own = post(client, n_layers=n)
    assert shared["layers"][0]["output_row_norms"] == own["layers"][0]["output_row_norms"]
    assert shared["layers"][1]["output_row_norms"] != own["layers"][1]["output_row_norms"]


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_without_attention_only_the_nudged_row_changes_at_every_depth(
    client: TestClient, norm: str
) -> None:
    for n in range(1, 13):
        d = post(client, n_layers=n, norm=norm, position=2, scale=1.0)
        assert d["changed_positions"] == [2]
        for layer in d["layers"]:
            assert layer["changed_positions"] == [2]
            assert layer["max_abs_change_other_positions"] == 0.0
            assert layer["delta_norm_per_position"][2] > 0
    # Independently of the server's comparison: two requests, tokens differing in row 2 only.
    x = tokens(client)
    delta = np.linspace(-1, 1, 16)
    xp = x.copy()
    xp[2] += delta
    xp = xp.astype(np.float32).astype(np.float64)  # what the server receives
    body = {k: v for k, v in BASE.items() if k not in ("num_tokens", "input_seed")}
    outs = []
    for t in (x, xp):
        r = client.post(
            "/api/stack", json={**body, "n_layers": 12, "norm": norm, "tokens": t.tolist()}
        )
        assert r.status_code == 200, r.text
        outs.append(np.array(r.json()["output"], dtype=np.float32))
    same = [bool((outs[0][i] == outs[1][i]).all()) for i in range(6)]
    assert same == [True, True, False, True, True, True]


def test_with_attention_every_row_changes_after_the_first_layer(client: TestClient) -> None:
    for norm in ("post", "pre"):
        d = post(client, n_layers=3, attention=True, norm=norm, position=4, scale=0.5)
        for layer in d["layers"]:
            assert layer["changed_positions"] == list(range(6))
            assert layer["max_abs_change_other_positions"] > 0
        assert d["changed_positions"] == list(range(6))


def test_delta_nudge_matches_reference(client: TestClient) -> None:
    delta = [0.1 * (i % 5 - 2) for i in range(16)]
    d = post(client, n_layers=3, attention=True, position=1, delta=delta, num_heads=2)
    x = tokens(client)
    xp = x.copy()
    xp[1] += np.array(delta, dtype=np.float32)
    a = reference_stack(x, 3, 3, shared=False, attention=True, norm="post", heads=2)
    b = reference_stack(xp, 3, 3, shared=False, attention=True, norm="post", heads=2)
    for layer, ra, rb in zip(d["layers"], a, b, strict=True):
        np.testing.assert_allclose(
            layer["delta_norm_per_position"],
            np.linalg.norm(rb["output"] - ra["output"], axis=1),
            rtol=1e-3,
            atol=1e-5,
        )


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"n_layers": 0}, "n_layers"),
        ({"n_layers": 13}, "less than or equal to 12 (got 13)"),
        ({"norm": "middle"}, "norm"),
        ({"attention": True, "num_heads": 3}, "num_heads = 3 does not divide d_model = 16"),
        ({"mode": "train"}, "eval mode"),
        ({"scale": 1.0}, "scale needs a position"),
        ({"position": 6}, "position = 6 is out of range"),
        ({"position": 1, "scale": 1.0, "delta": [0.0] * 16}, "either delta or scale"),
        ({"position": 1, "delta": [0.0] * 3}, "delta has 3 numbers"),
        ({"model": "minilm-l6", "text": "hi"}, "model = 'minilm-l6'"),
    ],
)
def test_bad_bodies_are_422_in_words(client: TestClient, body: dict, words: str) -> None:
    r = client.post("/api/stack", json={**BASE, **body})
    assert r.status_code == 422, r.text
    assert words in str(r.json()["detail"])


def test_weights_need_share_weights(client: TestClient) -> None:
    fw = FFNWeights.seeded(16, 64, 0, gated=False, bias=True)
    weights = {k: v.tolist() for k, v in fw.named().items()}
    r = client.post("/api/stack", json={**BASE, "weights": weights})
    assert r.status_code == 422 and "share_weights = true" in r.text
    d = post(client, n_layers=3, share_weights=True, weights=weights)
    assert {layer["weights_stream"] for layer in d["layers"]} == {"submitted"}


def test_parameter_limit_counts_every_layer(settings_env: pytest.MonkeyPatch) -> None:
    from app.main import create_app

    settings_env.setenv("FFN_LAB_MAX_PARAMS", str(3 * 2128))
    with TestClient(create_app()) as c:
        assert c.post("/api/stack", json={**BASE, "n_layers": 3}).status_code == 200
        r = c.post("/api/stack", json={**BASE, "n_layers": 4})
        assert r.status_code == 422
        msg = str(r.json()["detail"])
        assert "8,512 parameters" in msg and "at most 6,384" in msg and "max_params" not in msg
        assert (
            c.post("/api/stack", json={**BASE, "n_layers": 12, "share_weights": True}).status_code
            == 200
        )
