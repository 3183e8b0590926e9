"""Bodies parsed by orjson read exactly as `json.loads` reads them, errors included."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api.json_body import loads

EDGES = [
    b'{"seed": 1180591620717411303424}',
    b'{"seed": -9223372036854775809}',
    b"18446744073709551616",
    b"9223372036854775807",
    b'{"tokens": [[NaN, Infinity, -Infinity]]}',
    b"1e400",
    b"-0",
    b"-0.0",
    b"4.9e-324",
    b'"\\ud800"',
    b'{"a": 1, "a": 2}',
    b"\xef\xbb\xbf{}",
    b'{"tokens": [[0.1, 0.2], [0.30000000000000004, 1e-7]]}',
    b"[1, 2, 3",
    b"{} x",
    b"",
    b"[1,]",
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("body", EDGES)
def test_loads_reads_every_body_as_the_standard_library(body: bytes) -> None:
    try:
        expected: Any = json.loads(body)
    except json.JSONDecodeError as e:
        with pytest.raises(json.JSONDecodeError) as got:
            loads(body)
        assert (got.value.msg, got.value.pos) == (e.msg, e.pos)
        return
    assert _same(loads(body), expected)


JSON = {"content-type": "application/json"}


def test_a_request_with_its_own_tokens_is_answered_as_before(client: TestClient) -> None:
    tokens = [[round(0.001 * (i * 7 + j) - 0.5, 6) for j in range(16)] for i in range(4)]
    body = json.dumps({"d_model": 16, "d_ff": 64, "tokens": tokens})
    r = client.post("/api/forward", content=body, headers=JSON)
    assert r.status_code == 200
    got = r.json()["input"]
    assert all(
        abs(a - b) < 1e-4
        for ra, rb in zip(got, tokens, strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    bad = client.post("/api/forward", content=b'{"d_model": 16, "tokens": [[1, 2', headers=JSON)
    assert bad.status_code == 422
    assert "json" in bad.text.lower()
