"""Property test of POST /api/weights/upload: layer files of every format from random
shapes, dtypes, values and corruptions (tests/layer_files.py) are answered 200 or 422,
never a 5xx, and reading one never holds more than the body plus 2x the upload limit."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, seed, settings

from app.config import Settings
from app.main import create_app
from tests.layer_files import layer_files

LIMIT = 1 << 20
STATUSES: Counter[int] = Counter()


@pytest.fixture(scope="module")
def small() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(upload_max_bytes=LIMIT, upload_cache_bytes=0))) as c:
        yield c


@seed(0)
@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(file=layer_files())
def test_any_layer_file_is_200_or_422_with_bounded_memory(
    small: TestClient, file: tuple[str, bytes]
) -> None:
    name, data = file
    tracemalloc.start()
    try:
        response = small.post("/api/weights/upload", params={"filename": name}, content=data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    STATUSES[response.status_code] += 1
    assert response.status_code in (200, 422, 413), response.text[:300]
    if response.status_code == 422:
        item = response.json()["detail"][0]
        assert item["loc"] == ["body", "file"] and item["msg"]
    assert peak <= len(data) + 2 * LIMIT + (1 << 20), f"{peak:,} bytes for {len(data):,}"


def test_the_fuzz_reached_both_answers() -> None:
    """Run after the property test: valid files were accepted and bad ones refused."""
    if not STATUSES:
        pytest.skip("the property test did not run")
    assert STATUSES[200] >= 10 and STATUSES[422] >= 10, STATUSES
