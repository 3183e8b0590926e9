"""Every answer is bounded: no answer over 1 MB at any preset, T <= 64.

Every endpoint that returns tensors is asked at every preset of app/model/presets.py at a
small odd T (long decimals) and at T = 64 (the limit); LLaMA-7B also at T = 1 (the most
dead units). The display policy summarises the [T, n] tensors; statistics stay full size
and are checked here against the full shapes. The snapshot is an HTML file that inlines
plotly.js (4.8 MB): its own part, the file less the library, is what is bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import plotly.offline
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.model.presets import PRESETS
from app.model.pretrained import is_available

MB = 1_000_000

ENDPOINTS: dict[str, dict[str, Any]] = {
    "/api/forward": {},
    "/api/perturb": {"position": 0, "scale": 1.0},
    "/api/dropout": {"dropout": 0.1},
    "/api/block": {"norm": "pre"},
    "/api/attention-vs-ffn": {"position": 0, "scale": 1.0, "num_heads": 64},
    "/api/variants": {},
    "/api/misconceptions": {"position": 0},
    "/api/conv1d-check": {},
    "/api/budget": {"num_heads": 8},
    "/api/snapshot": {"position": 0},
}


def _cases() -> list[Any]:
    cases = []
    for preset in PRESETS:
        tokens: list[int | None] = [None] if preset.weights is not None else [7, 64]
        if preset.id == "transformer-base":
            tokens = [7, 16, 64]  # T 16: the budget's own size, sent whole
        if preset.id == "llama-7b":
            tokens = [1, 7, 64]
        for t in tokens:
            big = preset.d_model * preset.d_ff >= 4096 * 11008
            marks = [pytest.mark.slow] if big else []
            cases.append(pytest.param(preset, t, id=f"{preset.id}-T{t}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    # Sizes are asserted, not times: a generous budget so a busy machine cannot turn a
    # LLaMA-size answer into a 503.
    settings = Settings(request_timeout_s=600)
    with TestClient(create_app(settings)) as c:
        yield c


def _body(preset: Any, tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "d_model": preset.d_model,
        "d_ff": preset.d_ff,
        "activation": preset.activation,
        "bias": preset.bias,
    }
    if preset.weights is not None:
        body |= {"tokens": preset.tokens, "weights": preset.weights}
    else:
        body["num_tokens"] = tokens
    return body


@pytest.mark.parametrize(("preset", "tokens"), _cases())
def test_no_answer_over_1_mb(client: TestClient, preset: Any, tokens: int | None) -> None:
    base = _body(preset, tokens)
    sizes: dict[str, int] = {}
    for url, extra in ENDPOINTS.items():
        body = {**base, **extra}
        if url in ("/api/variants",) and preset.activation in ("swiglu", "geglu"):
            body["activation"] = "relu"  # the variants view takes a plain set
            body.pop("weights", None)
        if "num_heads" in body and body["d_model"] % body["num_heads"]:
            body["num_heads"] = 1
        response = client.post(url, json=body)
        assert response.status_code == 200, (url, response.text[:300])
        size = len(response.content)
        if url == "/api/snapshot":
            size -= len(plotly.offline.get_plotlyjs())
        sizes[url] = size
        if url == "/api/forward":
            data = response.json()
            t = data["config"]["num_tokens"]
            assert data["shapes"]["hidden"] == [t, preset.d_ff]  # statistics: full shapes
            assert len(data["sparsity"]["per_neuron"]) == preset.d_ff
            assert sum(data["pre_activation_histogram"]["counts"]) == t * preset.d_ff
    over = {url: size for url, size in sizes.items() if size > MB}
    assert not over, f"answers over 1 MB: {over} (all: {sizes})"


def test_include_weights_at_llama_size_is_refused_clearly(client: TestClient) -> None:
    body = {"d_model": 4096, "d_ff": 11008, "activation": "swiglu", "bias": False}
    response = client.post("/api/forward", json={**body, "include_weights": True})
    assert response.status_code == 422
    detail = response.text
    assert "include_weights" in detail and "135,266,304" in detail


def test_include_weights_at_small_size_is_sent(client: TestClient) -> None:
    body = {"d_model": 16, "d_ff": 64, "include_weights": True}
    data = client.post("/api/forward", json=body).json()
    assert [len(data["weights"]["w1"]), len(data["weights"]["w1"][0])] == [16, 64]


@pytest.mark.skipif(not is_available(), reason="pretrained weights package not installed")
@pytest.mark.parametrize("url", ["/api/forward", "/api/perturb"])
def test_pretrained_answers_are_bounded(client: TestClient, url: str) -> None:
    text = " ".join(["the cat sat on the mat and looked at the dog"] * 5)  # 57 tokens
    body: dict[str, Any] = {"model": "minilm-l6", "layer": 2, "text": text}
    if url == "/api/perturb":
        body |= {"position": 2, "replace_word": "dog"}
    response = client.post(url, json=body)
    assert response.status_code == 200, response.text[:300]
    assert len(response.content) <= MB
    if url == "/api/forward":
        data = response.json()
        assert len(data["sparsity"]["per_neuron"]) == 1536
