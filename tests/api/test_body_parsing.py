"""Bodies the JSON parser gives up on are 422s naming the limit, and the answer cache keys on
what decides an answer (the content type included): a cached 200 never answers a request
that, sent fresh, is refused."""

from __future__ import annotations

import json
import sys

import pytest
from fastapi.testclient import TestClient

from app.api.middleware.answer_cache import CACHED_PATHS

BODY = {"d_model": 8, "d_ff": 16, "num_tokens": 3, "seed": 1}


def _item(client: TestClient, data: bytes) -> dict[str, object]:
    response = client.post(
        "/api/forward", content=data, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, (response.status_code, response.text[:300])
    item: dict[str, object] = response.json()["detail"][0]
    assert item["loc"] == ["body"]
    return item


@pytest.mark.parametrize("depth", [1_000, 5_000, 100_000])
def test_a_body_nested_too_deep_names_the_depth(client: TestClient, depth: int) -> None:
    item = _item(client, b"[" * depth + b"]" * depth)
    assert item["code"] == "body_depth"
    assert item["params"] == {"depth": depth, "limit": item["params"]["limit"]}  # type: ignore[index]
    assert f"nested {depth:,} levels deep" in str(item["msg"])
    assert "flatter" in str(item["msg"])


@pytest.mark.parametrize("digits", [5_000, 100_000])
def test_a_number_too_long_names_its_digits(client: TestClient, digits: int) -> None:
    item = _item(client, b'{"d_model": ' + b"7" * digits + b"}")
    assert item["code"] == "body_number"
    assert item["params"] == {"digits": digits, "limit": 4300}
    assert f"{digits:,} digits" in str(item["msg"]) and "4,300" in str(item["msg"])


@pytest.mark.parametrize("path", ["/api/forward", "/api/perturb"])
@pytest.mark.parametrize("content_type", ["text/plain", "image/png"])
def test_a_cached_answer_never_answers_another_content_type(
    client: TestClient, path: str, content_type: str
) -> None:
    assert path in CACHED_PATHS
    data = json.dumps(BODY).encode()
    first = client.post(path, content=data, headers={"content-type": "application/json"})
    again = client.post(path, content=data, headers={"content-type": "application/json"})
    assert first.status_code == again.status_code == 200
    assert again.headers["x-ffn-lab-cache"] == "hit"
    other = client.post(path, content=data, headers={"content-type": content_type})
    assert other.status_code == 422, other.text[:200]
    assert "Content-Type: application/json" in other.text


def test_a_value_too_deep_to_print_is_not_echoed() -> None:
    """A refused value is echoed in the 422 when short; one nested deeper than the
    interpreter can print (how deep depends on the stack the request runs on) is left out,
    never a 500."""
    from app.api.middleware.errors import echo

    value: list[object] = []
    for _ in range(sys.getrecursionlimit() + 10):
        value = [value]
    assert echo(value) is None
    assert echo([[1, 2]]) == "[[1, 2]]"
