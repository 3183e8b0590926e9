"""Schemathesis against the app's own OpenAPI schema: no 5xx, responses match the schema.

100 positive and 100 negative examples per operation (derandomised, so CI is repeatable;
at least 200 generated requests per operation, the upload included);
limits are lowered through Settings so that no generated case builds a large FFN. The
longer run is `python -m benchmarks.fuzz --examples 300`. Operations that take `weights`
also get consistent submitted-weight bodies (biases on and off, plain and gated), and at
least one bias-free one must answer 200.
"""

from __future__ import annotations

from collections import Counter

import pytest
from schemathesis import GenerationMode

from benchmarks.fuzz import BIAS_FREE, CASES, SMALL_LIMITS, SUBMITTED, fuzz_operation, limits

EXAMPLES = 100
TAKES_WEIGHTS = {
    "/api/forward",
    "/api/perturb",
    "/api/snapshot",
    "/api/attention-vs-ffn",
    "/api/block",
    "/api/variants",
    "/api/budget",
    "/api/conv1d-check",
    "/api/dropout",
    "/api/misconceptions",
}

RAW_FILE_BODIES = {"/api/weights/upload"}
"""Bodies that are weight files: the schema's random bytes are (rightly) refused with 422;
half the positive cases are layer files of every format, valid or corrupted
(tests/layer_files.py), of which valid ones must be accepted."""


SLOW_POSITIVE = {"/api/handout", "/api/snapshot", "/api/neuron"}
"""Operations whose valid cases do real work (a handout's trainings, a snapshot's every panel,
a neuron of the pretrained model): 3-11 s for 100 cases, so they run with the slow tests."""


def _case(method: str, path: str, mode: GenerationMode) -> object:
    slow = mode is GenerationMode.POSITIVE and path in SLOW_POSITIVE
    return pytest.param(
        method,
        path,
        mode,
        id=f"{method} {path} {mode.value}",
        marks=[pytest.mark.slow] if slow else [],
    )


@pytest.mark.parametrize(("method", "path", "mode"), [_case(*case) for case in CASES])
def test_fuzz_no_5xx_and_schema_conformance(method: str, path: str, mode: GenerationMode) -> None:
    reached: Counter[str] = Counter()
    with limits(SMALL_LIMITS):
        statuses = fuzz_operation(method, path, mode, EXAMPLES, reached=reached)
    assert sum(statuses.values()) >= 1
    assert not [s for s in statuses if s >= 500]
    if path.startswith("/api/sessions"):
        # a session's endpoints answer 2xx only with a live code (and the presenter's token),
        # which generated cases do not have: refusals are checked in tests/api/test_sessions_*
        assert set(statuses) <= {200, 201, 204, 403, 404, 409, 413, 422, 429}, statuses
        return
    if mode is GenerationMode.POSITIVE and path in RAW_FILE_BODIES:
        assert set(statuses) <= {200, 422} and statuses[200] >= 1, statuses
    elif mode is GenerationMode.POSITIVE:  # the response schema check ran on real answers
        assert statuses[200] >= 1, statuses
        if path in TAKES_WEIGHTS:  # consistent submitted weights, bias-free too, really ran
            assert reached[SUBMITTED] >= 1 and reached[BIAS_FREE] >= 1, reached
    else:
        assert statuses[422] >= 1, statuses
