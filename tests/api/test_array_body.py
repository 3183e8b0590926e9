"""Large bodies of numbers read by simdjson (`app.api.array_body`) give what `json.loads`
gives, and the API answers them (and refuses them) exactly as it does by the usual reader."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.api import array_body
from app.api.schemas.forward import ForwardRequest

FIELDS = ForwardRequest.array_fields
JSON = {"content-type": "application/json"}

numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308, 1e-7, 0.1]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(alphabet='ab[]{}",\\ é', max_size=6),
)
others = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner),
    max_leaves=6,
)


@st.composite
def matrices(draw: st.DrawFn) -> Any:
    """Rows of numbers, often rectangular, sometimes with one flaw."""
    rows, width = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    value: list[Any] = [[draw(numbers) for _ in range(width)] for _ in range(rows)]
    flaw = draw(st.sampled_from([None] * 6 + ["ragged", "nested", "item", "row", "empty"]))
    r, c = draw(st.integers(0, rows - 1)), draw(st.integers(0, width - 1))
    if flaw == "ragged":
        value[r].append(1.0)
    elif flaw == "nested":
        value[r][c] = [value[r][c]]
    elif flaw == "item":
        value[r][c] = draw(st.one_of(st.none(), st.booleans(), st.text(max_size=2), st.just({})))
    elif flaw == "row":
        value[r] = draw(numbers)
    elif flaw == "empty":
        value = draw(st.sampled_from([[], [[]], [[] for _ in range(rows)]]))
    return value


def _same(got: Any, expected: Any) -> bool:
    """`got` (arrays where the fast path read them) is `expected` (json.loads's value)."""
    if isinstance(got, np.ndarray):
        want = np.asarray(expected, dtype=np.float64)
        return (
            got.dtype == np.float64
            and got.shape == want.shape
            and bool(np.array_equal(got, want))
            and bool((np.signbit(got) == np.signbit(want)).all())
        )
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_same(got[k], expected[k]) for k in got)
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(
            _same(a, b) for a, b in zip(got, expected, strict=True)
        )
    if isinstance(got, float) and isinstance(expected, float):
        return got == expected and np.signbit(got) == np.signbit(expected)
    return type(got) is type(expected) and got == expected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tokens=matrices(),
    bias=st.one_of(st.none(), st.lists(numbers, min_size=1, max_size=3)),
    rest=st.dictionaries(st.sampled_from(["d_model", "note", "seed"]), others, max_size=2),
    twice=st.booleans(),
)
def test_every_body_it_reads_is_what_json_loads_reads(
    tokens: Any, bias: Any, rest: Any, twice: bool
) -> None:
    value = {**rest, "tokens": tokens}
    if bias is not None:
        value["weights"] = {"b1": bias, "w1": tokens}
    body = json.dumps(value).encode()
    if twice:  # a key given twice: json.loads keeps the last one
        body = body[:-1] + b', "tokens": [[7.0]]}'
    got = array_body.read(body, FIELDS, min_bytes=0)
    if got is not None:
        assert _same(got, json.loads(body))
    plain = (
        not twice
        and all(
            isinstance(row, list)
            and len(row) == len(tokens[0]) > 0
            and all(type(v) in (int, float) for v in row)
            for row in tokens
        )
        and tokens
        and "[" not in json.dumps(rest)
    )
    if plain and bias is None:
        assert got is not None and isinstance(got["tokens"], np.ndarray)


@pytest.mark.parametrize(
    "body",
    [
        b'{"tokens": [[1, 2], [3]]}',
        b'{"tokens": [[1, [2]], [3, 4]]}',
        b'{"tokens": [[1, true], [3, 4]]}',
        b'{"tokens": [[1, null], [3, 4]]}',
        b'{"tokens": [[1, "2"], [3, 4]]}',
        b'{"tokens": [[1, 2], 3]}',
        b'{"tokens": [[], []]}',
        b'{"tokens": []}',
        b'{"tokens": [[1, 2]], "tokens": [[3, 4]]}',
        b'{"tokens": [[1e400, 2]]}',
        b'{"tokens": [[NaN, 2]]}',
        b'{"tokens": [[123456789012345678901234567890, 2]]}',
        b'{"tokens": [[1, 2]], "note": "[x]"}',
        b"[[1, 2]]",
        b'{"tokens": [[1, 2]]',
    ],
)
def test_anything_but_plain_rows_of_numbers_is_left_to_the_usual_reader(body: bytes) -> None:
    assert array_body.read(body, FIELDS, min_bytes=0) is None


def test_a_nested_body_deeper_than_json_loads_reads_is_left_to_the_usual_reader() -> None:
    limit = array_body.max_depth()
    deep = b'{"note": ' + b"[" * limit + b"]" * limit + b', "tokens": [[1.0]]}'
    assert array_body.read(deep, FIELDS, min_bytes=0) is None


def _l_tokens(rows: int = 32, width: int = 1024) -> list[list[float]]:
    values = np.random.default_rng(3).standard_normal((rows, width))
    return np.round(values, 6).tolist()  # type: ignore[no-any-return]


def _both_ways(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, value: dict[str, Any]
) -> tuple[Any, Any, list[bool]]:
    """The API's answer to `value` read by the fast path, then by the usual reader."""
    body = json.dumps(value).encode()
    assert len(body) >= array_body.MIN_BYTES
    original = array_body.read
    used: list[bool] = []

    def spy(raw: bytes, fields: Any) -> Any:
        got = original(raw, fields)
        used.append(got is not None)
        return got

    monkeypatch.setattr(array_body, "read", spy)
    fast = client.post("/api/forward", content=body, headers=JSON)
    monkeypatch.setattr(array_body, "read", lambda raw, fields: None)
    usual = client.post("/api/forward", content=body, headers=JSON)
    return fast, usual, used


def test_own_tokens_at_l_are_answered_as_by_the_usual_reader(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = {"d_model": 1024, "d_ff": 4096, "tokens": _l_tokens()}
    fast, usual, used = _both_ways(client, monkeypatch, value)
    assert used == [True]
    assert fast.status_code == usual.status_code == 200
    assert fast.content == usual.content
    assert np.allclose(fast.json()["input"][0][:8], value["tokens"][0][:8], atol=1e-6)


def test_own_weights_are_answered_as_by_the_usual_reader(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(4)
    weights = {
        "w1": np.round(rng.standard_normal((64, 256)) * 0.1, 5).tolist(),
        "b1": np.round(rng.standard_normal(256) * 0.1, 5).tolist(),
        "w2": np.round(rng.standard_normal((256, 64)) * 0.1, 5).tolist(),
        "b2": np.round(rng.standard_normal(64) * 0.1, 5).tolist(),
    }
    value = {"d_model": 64, "d_ff": 256, "num_tokens": 4, "weights": weights}
    fast, usual, used = _both_ways(client, monkeypatch, value)
    assert used == [True]
    assert fast.status_code == usual.status_code == 200
    assert fast.content == usual.content
    assert fast.json()["config"]["weights_source"] == "submitted"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda t: t[5].__setitem__(7, 20000.0), "tokens[5][7]"),
        (lambda t: [row.pop() for row in t], "tokens"),
        (lambda t: t[3].pop(), "tokens"),
        (lambda t: t[2].__setitem__(1, "0.5"), "tokens"),
        (lambda t: t.extend([t[0]] * 40), "tokens"),
    ],
    ids=["value over the limit", "rows too short", "ragged", "a string", "too many rows"],
)
def test_refusals_read_as_by_the_usual_reader(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, change: Any, field: str
) -> None:
    tokens = _l_tokens()
    change(tokens)
    fast, usual, _ = _both_ways(
        client, monkeypatch, {"d_model": 1024, "d_ff": 4096, "tokens": tokens}
    )
    assert fast.status_code == usual.status_code == 422
    assert fast.json() == usual.json()
    assert field in fast.text
