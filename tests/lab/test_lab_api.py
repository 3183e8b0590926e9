"""lab.forward / lab.perturb give the same numbers as POST /api/forward and /api/perturb."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app import lab
from app.model.pretrained import is_available

RNG = np.random.default_rng(7)
TOKENS = RNG.standard_normal((5, 6)).round(4).tolist()
WEIGHTS = {
    "w1": RNG.standard_normal((6, 10)).round(4).tolist(),
    "b1": RNG.standard_normal(10).round(4).tolist(),
    "w2": RNG.standard_normal((10, 6)).round(4).tolist(),
    "b2": RNG.standard_normal(6).round(4).tolist(),
}

FORWARD_BODIES: list[dict[str, Any]] = [
    {"d_model": 16, "d_ff": 64, "activation": "gelu", "num_tokens": 6},
    {"d_model": 12, "d_ff": 40, "activation": "swiglu", "num_tokens": 4, "seed": 3},
    {"d_model": 8, "d_ff": 24, "activation": "silu", "bias": False, "input_seed": 5},
    {"d_model": 6, "d_ff": 10, "activation": "relu", "tokens": TOKENS, "weights": WEIGHTS},
    {"d_model": 8, "d_ff": 32, "mode": "train", "dropout": 0.3, "dropout_seed": 2},
    {"d_model": 512, "d_ff": 2048, "num_tokens": 32, "unit_start": 100},  # summarised
    {"d_model": 8, "d_ff": 16, "include_weights": True, "sparsity_threshold": 0.2},
]


def _same(ours: Any, theirs: Any, where: str) -> None:
    """Equal numbers: float32 arrays exactly (JSON floats read back as float32)."""
    if isinstance(ours, np.ndarray):
        expected = np.asarray(theirs, dtype=ours.dtype)
        np.testing.assert_array_equal(ours, expected, err_msg=where)
    elif isinstance(ours, dict):
        assert isinstance(theirs, dict), where
        assert set(ours) == set(theirs), where
        for key in ours:
            _same(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list | tuple):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(ours, float | np.floating):
        assert np.float32(ours) == np.float32(theirs), where
    else:
        assert ours == theirs, where


def _compare(result: lab.Result, answer: dict[str, Any]) -> None:
    for key, value in answer.items():
        assert key in result, key
        _same(result[key], value, key)
    for key in result:
        assert result[key] is None or key in answer, key


def _matches_api(client: TestClient, endpoint: str, body: dict[str, Any]) -> lab.Result:
    """`lab.<endpoint>(**body)` against POST /api/<endpoint> with the same body; the result."""
    response = client.post(f"/api/{endpoint}", json=body)
    assert response.status_code == 200, response.text
    result: lab.Result = getattr(lab, endpoint)(**body)
    _compare(result, response.json())
    return result


def _refuses_like_api(client: TestClient, endpoint: str, body: dict[str, Any]) -> None:
    """`lab.<endpoint>(**body)` raises a ValueError whose message is in the 422 answer of
    POST /api/<endpoint> with the same body."""
    response = client.post(f"/api/{endpoint}", json=body)
    assert response.status_code == 422, response.text
    with pytest.raises(ValueError) as caught:
        getattr(lab, endpoint)(**body)
    assert str(caught.value) in response.text


@pytest.mark.parametrize("body", FORWARD_BODIES)
def test_forward_matches_api(client: TestClient, body: dict[str, Any]) -> None:
    _matches_api(client, "forward", body)


@pytest.mark.parametrize(
    "body",
    [
        {"d_model": 16, "d_ff": 64, "activation": "gelu", "num_tokens": 6, "position": 2},
        {"d_model": 8, "d_ff": 20, "activation": "geglu", "position": 1, "scale": 3.0},
        {"d_model": 6, "d_ff": 10, "tokens": TOKENS, "position": 4, "delta": [0.5] * 6},
    ],
)
def test_perturb_matches_api(client: TestClient, body: dict[str, Any]) -> None:
    result = _matches_api(client, "perturb", body)
    assert result["max_abs_change_other_positions"] == 0.0


@pytest.mark.skipif(not is_available(), reason="MiniLM weights package not installed")
def test_pretrained_text_matches_api(client: TestClient) -> None:
    body = {"model": "minilm-l6", "layer": 2, "text": "The cat sat on the mat."}
    _matches_api(client, "forward", body)
    _matches_api(client, "perturb", body | {"position": 2, "replace_word": "dog"})


def test_arrays_are_numpy_and_read_by_field_name() -> None:
    r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
    assert isinstance(r["hidden"], np.ndarray)
    assert r["hidden"].shape == (6, 64)
    assert r.hidden is r["hidden"]
    assert r["up"] is None


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"d_model": 0}, "d_model"),
        ({"activation": "tanh"}, "unknown activation"),
        ({"tokens": [[1.0, 2.0]], "d_model": 3}, "d_model = 3"),
        ({"num_tokens": 4, "position": 4}, "position = 4 is out of range"),
        ({"num_tokens": 999}, "num_tokens = 999 is over the limit"),
        ({"text": "hi"}, "text needs a pretrained model"),
        ({"d_model": 4, "d_ff": 4, "weights": {"w1": [[1.0] * 4] * 4}}, "weights.w2 is required"),
    ],
)
def test_bad_values_raise_value_error_naming_the_field(body: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        lab.perturb(**body)


def test_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="hiden"):
        lab.forward(hiden=3)
    with pytest.raises(TypeError, match="position"):
        lab.forward(position=1)


STACK_BODIES: list[dict[str, Any]] = [
    {"d_model": 16, "d_ff": 64, "num_tokens": 6, "n_layers": 3},
    {
        "d_model": 16,
        "d_ff": 64,
        "num_tokens": 6,
        "n_layers": 4,
        "attention": True,
        "num_heads": 2,
        "position": 2,
        "scale": 1.5,
        "norm": "pre",
    },
    {
        "d_model": 6,
        "d_ff": 10,
        "tokens": TOKENS,
        "weights": WEIGHTS,
        "share_weights": True,
        "n_layers": 2,
        "position": 1,
        "delta": [0.25] * 6,
    },
]


@pytest.mark.parametrize("body", STACK_BODIES)
def test_stack_matches_api(client: TestClient, body: dict[str, Any]) -> None:
    _matches_api(client, "stack", body)


@pytest.mark.parametrize(
    "body",
    [
        {"d_model": 16, "d_ff": 64, "num_tokens": 5, "seed": 2, "rank": 3},
        {"d_model": 12, "d_ff": 40, "activation": "swiglu", "d_inner": 4, "num_ffns": 2},
        {"d_model": 6, "d_ff": 10, "tokens": TOKENS, "weights": WEIGHTS},
    ],
)
def test_cheaper_matches_api(client: TestClient, body: dict[str, Any]) -> None:
    result = _matches_api(client, "cheaper", body)
    assert result["variants"][1]["name"] == "low_rank"


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("stack", {"model": "minilm-l6", "text": "hi", "share_weights": True}),
        ("stack", {"n_layers": 2, "mode": "train"}),
        ("stack", {"attention": True, "d_model": 16, "num_heads": 3}),
        ("stack", {"scale": 1.0}),
        ("stack", {"num_tokens": 4, "position": 4}),
        ("stack", {"weights": WEIGHTS, "d_model": 6, "d_ff": 10}),
        ("stack", {"position": 1, "delta": [1.0, 2.0]}),
        ("cheaper", {"d_model": 8, "d_ff": 16, "rank": 9}),
        ("cheaper", {"d_model": 8, "d_ff": 16, "d_inner": 9}),
        ("cheaper", {"model": "minilm-l6", "text": "hi"}),
    ],
)
def test_stack_and_cheaper_refuse_with_the_api_words(
    client: TestClient, endpoint: str, body: dict[str, Any]
) -> None:
    """The notebook raises ValueError where the API answers 422, with the same message."""
    _refuses_like_api(client, endpoint, body)


def test_field_bounds_raise_value_errors_naming_the_field() -> None:
    with pytest.raises(ValueError, match="n_layers = 13"):
        lab.stack(n_layers=13)
    with pytest.raises(ValueError, match="norm = 'mid'"):
        lab.stack(norm="mid")
    with pytest.raises(ValueError, match="num_ffns = 0"):
        lab.cheaper(num_ffns=0)


def test_stack_and_cheaper_take_only_their_body_fields() -> None:
    with pytest.raises(TypeError, match="rank"):
        lab.stack(rank=2)
    with pytest.raises(TypeError, match="n_layers"):
        lab.cheaper(n_layers=2)


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("forward", {"d_model": 512, "d_ff": 2048, "include_weights": True}),
        ("forward", {"tokens": TOKENS, "num_tokens": 5, "d_model": 6}),
        ("forward", {"model": "minilm-l6", "text": "hi", "num_tokens": 3}),
        ("forward", {"model": "minilm-l6", "text": "hi", "mode": "train"}),
        ("forward", {"d_model": 6, "d_ff": 10, "weights": WEIGHTS, "weights_id": "x"}),
        ("perturb", {"num_tokens": 4, "position": 1, "replace_word": "dog"}),
        ("perturb", {"num_tokens": 4, "position": 1, "scale": 1e9}),
        ("perturb", {"num_tokens": 4, "position": 1, "delta": [1.0, 2.0]}),
        ("perturb", {"model": "minilm-l6", "text": "hi", "scale": 1.0, "replace_word": "a"}),
    ],
)
def test_forward_and_perturb_refuse_with_the_api_words(
    client: TestClient, endpoint: str, body: dict[str, Any]
) -> None:
    """One source of truth: the checks across fields are app.lab.spec.checks', for both."""
    _refuses_like_api(client, endpoint, body)
