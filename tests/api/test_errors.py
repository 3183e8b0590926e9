"""Bad input is a 422 whose message names the field, the value and what is allowed."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.config import get_settings
from app.main import create_app

OK = {"d_model": 4, "d_ff": 8}


def _detail(r):  # type: ignore[no-untyped-def]
    assert r.status_code == 422, r.text
    return " | ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in r.json()["detail"])


CASES = [
    pytest.param(
        {"activation": "tanh"},
        "supported: relu, gelu, gelu_tanh, silu, swiglu, geglu, geglu_tanh",
        id="unknown-activation",
    ),
    pytest.param({"tokens": [[1, 2, 3, 4], [1, 2]]}, "row lengths are [4, 2]", id="ragged-rows"),
    pytest.param({"tokens": [[1, 2, 3]]}, "each must have d_model = 4", id="wrong-width"),
    pytest.param(
        {"tokens": [[1, 2, 3, 1e39]]}, "tokens[0][3] = 1e+39 is not allowed", id="overflow-float32"
    ),
    pytest.param({"tokens": []}, "tokens must not be empty", id="zero-tokens"),
    pytest.param({"num_tokens": 0}, "num_tokens", id="num-tokens-zero"),
    pytest.param({"d_model": 0}, "d_model", id="zero-d_model"),
    pytest.param({"d_ff": -3}, "d_ff", id="negative-d_ff"),
    pytest.param({"d_ff": 10**9}, "d_ff = 1000000000 is over the limit of 16384", id="huge-d_ff"),
    pytest.param(
        {"d_model": 4096, "d_ff": 16384, "activation": "swiglu"},
        "the limit is 150,000,000",
        id="too-many-params",
    ),
    pytest.param(
        {"num_tokens": 65}, "num_tokens = 65 is over the limit of 64", id="too-many-tokens"
    ),
    pytest.param(
        {"tokens": [[1, 2, 3, 4]], "num_tokens": 1}, "either tokens or num_tokens", id="both-inputs"
    ),
    pytest.param({"tokens": [[1, "x", 3, 4]]}, "tokens.0.1", id="string-number"),
    pytest.param(
        {
            "activation": "swiglu",
            "weights": {"w1": [[0] * 8] * 4, "b1": [0] * 8, "w2": [[0] * 4] * 8, "b2": [0] * 4},
        },
        "weights.w_gate is required for activation 'swiglu'",
        id="gated-without-w_gate",
    ),
    pytest.param(
        {"weights": {"w1": [[0] * 4] * 8, "b1": [0] * 8, "w2": [[0] * 4] * 8, "b2": [0] * 4}},
        "weights.w1 has shape [8, 4]; expected [4, 8]",
        id="weights-wrong-shape",
    ),
    pytest.param(
        {"bias": False, "weights": {"w1": [[0] * 8] * 4, "b1": [0] * 8, "w2": [[0] * 4] * 8}},
        "weights.b1 was given but is not used: bias is false",
        id="unused-bias",
    ),
    pytest.param({"mode": "training"}, "mode", id="bad-mode"),
    pytest.param({"dropout": 1.0}, "dropout", id="dropout-one"),
    pytest.param({"unknown_field": 1}, "unknown_field", id="extra-field"),
]


@pytest.mark.parametrize(("patch", "expected"), CASES)
def test_forward_rejects(client, patch, expected):
    assert expected in _detail(client.post("/api/forward", json={**OK, **patch}))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_rejected(client, literal):
    body = f'{{"d_model": 2, "d_ff": 4, "tokens": [[1, {literal}]]}}'
    r = client.post("/api/forward", content=body, headers={"content-type": "application/json"})
    assert "finite" in _detail(r)


PERTURB_CASES = [
    pytest.param(
        {"num_tokens": 3, "position": 3},
        "position = 3 is out of range: there are 3 tokens, so position must be in [0, 2]",
        id="position-out-of-range",
    ),
    pytest.param({"position": -1}, "position", id="negative-position"),
    pytest.param(
        {"delta": [1, 2]}, "delta has 2 numbers; it must have d_model = 4", id="delta-wrong-size"
    ),
    pytest.param(
        {"delta": [1, 2, 3, 4], "scale": 1}, "either delta or scale", id="delta-and-scale"
    ),
    pytest.param({"scale": 1e9}, "scale = 1e+09 is over the limit", id="huge-scale"),
]


@pytest.mark.parametrize(("patch", "expected"), PERTURB_CASES)
def test_perturb_rejects(client, patch, expected):
    assert expected in _detail(client.post("/api/perturb", json={**OK, **patch}))


def test_non_json_body(client):
    r = client.post(
        "/api/forward", content=b"not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["type"] == "json_invalid"


def test_limits_come_from_settings(settings_env):
    settings_env.setenv("FFN_LAB_MAX_TOKENS", "4")
    get_settings.cache_clear()
    with TestClient(create_app()) as c:
        r = c.post("/api/forward", json={**OK, "num_tokens": 5})
    assert "num_tokens = 5 is over the limit of 4" in _detail(r)


def test_large_inputs_are_not_echoed(client):
    r = client.post("/api/forward", json={**OK, "tokens": [[1, 2, 3]] * 60})
    assert r.status_code == 422
    assert all("input" not in e or len(repr(e["input"])) <= 200 for e in r.json()["detail"])


LIMIT_CASES = [
    pytest.param("/api/forward", {"d_ff": 10**9}, id="d_ff"),
    pytest.param("/api/forward", {"num_tokens": 10**6}, id="tokens"),
    pytest.param(
        "/api/forward", {"d_model": 4096, "d_ff": 16384, "activation": "swiglu"}, id="params"
    ),
    pytest.param("/api/forward", {"tokens": [[1e9, 0, 0, 0]]}, id="abs-value"),
    pytest.param("/api/perturb", {"position": 0, "scale": 1e9}, id="scale"),
    pytest.param("/api/forward", {"model": "minilm-l6", "text": "a" * 100_000}, id="text"),
    pytest.param("/api/attention-vs-ffn", {"num_heads": 10**4}, id="heads"),
]


@pytest.mark.parametrize(("path", "patch"), LIMIT_CASES)
def test_limit_messages_name_no_server_setting(client, path, patch):  # type: ignore[no-untyped-def]
    """Students read these: the limit in numbers, never an internal name like max_params."""
    r = client.post(path, json={**OK, **patch})
    assert r.status_code == 422, r.text
    detail = _detail(r)
    assert "limit" in detail or "within" in detail, detail
    assert "setting" not in detail and "max_" not in detail, detail


@pytest.mark.parametrize(
    ("body", "code", "params"),
    [
        (
            {"d_model": 4096, "d_ff": 16384, "activation": "swiglu", "bias": False},
            "too_many_params",
            {"d_model": 4096, "d_ff": 16384, "params": 201_326_592},
        ),
        ({"d_model": 4, "d_ff": 8, "num_tokens": 999}, "over_limit", {"field": "num_tokens"}),
        ({"d_model": 2, "d_ff": 4, "tokens": [[1, 2], [3]]}, "ragged", {"field": "tokens"}),
        ({"d_model": 2, "d_ff": 4, "tokens": [[1, 1e39]]}, "bad_value", {"value": "1e+39"}),
    ],
)
def test_refusals_carry_a_code_and_params_next_to_the_english_text(body, code, params):  # type: ignore[no-untyped-def]
    """The 422 item keeps its English `msg` and adds `code` and `params` (the page's
    catalogs say it in Chinese: errors.code.<code>)."""
    item = TestClient(create_app()).post("/api/forward", json=body).json()["detail"][0]
    assert item["code"] == code
    assert params.items() <= item["params"].items()
    assert isinstance(item["msg"], str) and item["msg"]  # the English text stays
