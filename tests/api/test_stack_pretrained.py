"""POST /api/stack with the real model: all six MiniLM layers' FFNs at once, against the
encoder's own pass (app.model.bert, itself checked against transformers)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.model.pretrained import get_pretrained, is_available

TEXT = "The cat sat on the mat."
BODY = {"model": "minilm-l6", "text": TEXT, "n_layers": 6}


@pytest.fixture(autouse=True)
def _weights() -> None:
    if not is_available():
        if os.environ.get("CI"):
            pytest.fail("the pretrained weights package is not installed")
        pytest.skip("the pretrained weights package is not installed")


def test_full_encoder_matches_hidden_states(client: TestClient) -> None:
    r = client.post("/api/stack", json={**BODY, "attention": True})
    assert r.status_code == 200, r.text
    d = r.json()
    model = get_pretrained()
    encoded = model.encode(TEXT)
    assert d["tokens"] == encoded.tokens and d["config"]["weights_source"] == "pretrained"
    traces = model.encoder.hidden_states(encoded.ids)
    for layer, trace in zip(d["layers"], traces, strict=True):
        ratio = torch.linalg.vector_norm(trace.ffn_output, dim=1) / torch.linalg.vector_norm(
            trace.ffn_input, dim=1
        )
        np.testing.assert_allclose(layer["update_ratio"], ratio.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            layer["output_row_norms"],
            torch.linalg.vector_norm(trace.layer_output, dim=1).numpy(),
            rtol=1e-5,
        )
    np.testing.assert_allclose(d["output"], traces[-1].layer_output.numpy(), rtol=1e-5, atol=1e-5)
    per_ffn = 384 * 1536 + 1536 + 1536 * 384 + 384
    assert d["params_total"] == 6 * per_ffn
    assert d["attention_params_total"] == 6 * (4 * 384 * 384 + 4 * 384)


def test_perturbation_contrast_on_the_real_layers(client: TestClient) -> None:
    body = {**BODY, "position": 3, "scale": 1.0}
    ffn_only = client.post("/api/stack", json={**body, "attention": False}).json()
    full = client.post("/api/stack", json={**body, "attention": True}).json()
    t = len(full["tokens"])
    for layer in ffn_only["layers"]:
        assert layer["changed_positions"] == [3]
        assert layer["max_abs_change_other_positions"] == 0.0
    for layer in full["layers"]:
        assert layer["changed_positions"] == list(range(t))
    assert ffn_only["changed_positions"] == [3] and full["changed_positions"] == list(range(t))


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"n_layers": 7}, "has 6 layers"),
        ({"share_weights": True}, "own trained weights"),
        ({"norm": "pre"}, "post-norm"),
        ({"position": 40}, "position = 40 is out of range"),
        ({"position": 1, "delta": [0.0] * 16}, "d_model = 384"),
    ],
)
def test_model_mode_refusals(client: TestClient, extra: dict, words: str) -> None:
    r = client.post("/api/stack", json={**BODY, **extra})
    assert r.status_code == 422, r.text
    assert words in r.text


def test_typed_text_echoes_the_heads_the_model_runs(client: TestClient) -> None:
    """The pretrained stack runs MiniLM's own attention heads whatever `num_heads` says, and
    the answer names that count (it used to echo the body's default of 1)."""
    r = client.post("/api/stack", json={**BODY, "attention": True})
    assert r.status_code == 200, r.text
    assert r.json()["num_heads"] == get_pretrained().config.num_attention_heads == 12
