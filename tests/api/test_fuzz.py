"""Schemathesis against the app's own OpenAPI schema: no 5xx, responses match the schema.

50 positive and 50 negative examples per operation (derandomised, so CI is repeatable);
limits are lowered through Settings so that no generated case builds a large FFN. The
longer run is `python -m benchmarks.fuzz --examples 300`.
"""

from __future__ import annotations

import pytest
from schemathesis import GenerationMode

from benchmarks.fuzz import CASES, SMALL_LIMITS, fuzz_operation, limits

EXAMPLES = 50


@pytest.mark.parametrize(
    ("method", "path", "mode"), CASES, ids=[f"{m} {p} {mode.value}" for m, p, mode in CASES]
)
def test_fuzz_no_5xx_and_schema_conformance(method: str, path: str, mode: GenerationMode) -> None:
    with limits(SMALL_LIMITS):
        statuses = fuzz_operation(method, path, mode, EXAMPLES)
    assert sum(statuses.values()) >= 1
    assert not [s for s in statuses if s >= 500]
    if mode is GenerationMode.POSITIVE:  # the response schema check ran on real answers
        assert statuses[200] >= 1, statuses
    else:
        assert statuses[422] >= 1, statuses
