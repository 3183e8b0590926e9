"""Inputs within ±10,000 that overflow float32: every endpoint answers with numbers its
OpenAPI schema allows (never `null` for a number) or a 422 that names the tensor that
overflowed and the input scale that would fit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app

D, F = 64, 256
BIG = 1e4
TOKENS = [[BIG] * D for _ in range(3)]
WEIGHTS = {
    "w1": [[BIG] * F for _ in range(D)],
    "b1": [BIG] * F,
    "w2": [[BIG] * D for _ in range(F)],
    "b2": [BIG] * D,
}
GATED = WEIGHTS | {"w_gate": [[BIG] * F for _ in range(D)], "b_gate": [BIG] * F}
SKIP = {"/api/tokenize", "/api/neuron", "/api/snapshot", "/api/weights/upload"}
"""Text-only endpoints (pretrained model), the HTML snapshot, the file upload."""


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(answer_cache_bytes=0, request_timeout_s=600))) as c:
        yield c


@pytest.fixture(scope="module")
def openapi(client: TestClient) -> dict[str, Any]:
    answer: dict[str, Any] = client.get("/openapi.json").json()
    return answer


def _bodies(path: str) -> list[dict[str, Any]]:
    """Overflowing bodies: huge tokens and weights through a gated FFN (the output's squares
    exceed 3.4e38) and a plain one."""
    gated = {"d_model": D, "d_ff": F, "activation": "swiglu", "tokens": TOKENS, "weights": GATED}
    plain = {"d_model": D, "d_ff": F, "activation": "relu", "tokens": TOKENS, "weights": WEIGHTS}
    if path == "/api/stack":
        shared = {"n_layers": 2, "share_weights": True}
        return [gated | shared, plain | shared]
    if path in ("/api/perturb", "/api/attention-vs-ffn", "/api/misconceptions"):
        return [gated | {"position": 0, "scale": 1.0}, plain | {"position": 0, "scale": 1.0}]
    return [gated, plain]


def _post_paths() -> list[str]:
    with TestClient(create_app(Settings())) as c:
        paths = c.get("/openapi.json").json()["paths"]
    # class sessions compute nothing from a body of FFN inputs (tests/api/test_sessions_*.py)
    return sorted(
        p
        for p, ops in paths.items()
        if "post" in ops and p not in SKIP and not p.startswith("/api/sessions")
    )


def _schema(openapi: dict[str, Any], path: str, status: str) -> dict[str, Any]:
    content = openapi["paths"][path]["post"]["responses"][status]["content"]
    schema = content["application/json"]["schema"]
    return {**schema, "components": openapi["components"]}


@pytest.mark.parametrize("path", _post_paths())
def test_answers_match_their_schema_when_values_overflow(
    client: TestClient, openapi: dict[str, Any], path: str
) -> None:
    refused = 0
    for body in _bodies(path):
        response = client.post(path, json=body)
        assert response.status_code in (200, 422), (path, response.status_code, response.text)
        if response.status_code == 200:
            jsonschema.validate(response.json(), _schema(openapi, path, "200"))
            continue
        item = response.json()["detail"][0]
        if item.get("code", "").startswith("overflow"):
            refused += 1
            assert "overflowed" in item["msg"] and item["params"]["tensor"] in item["msg"]
            assert "would fit" in item["msg"]
    if path in ("/api/perturb", "/api/block", "/api/cheaper"):
        assert refused, f"{path}: no overflow refused"


def test_the_refusal_names_a_scale_that_fits(client: TestClient) -> None:
    body = _bodies("/api/perturb")[0]
    item = client.post("/api/perturb", json=body).json()["detail"][0]
    assert item["code"] == "overflow" and item["loc"] == ["body", "tokens"]
    scale = float(item["params"]["scale"])
    assert 0 < scale < BIG
    smaller = body | {"tokens": [[scale] * D for _ in range(3)]}
    response = client.post("/api/perturb", json=smaller)
    assert response.status_code == 200, response.text
