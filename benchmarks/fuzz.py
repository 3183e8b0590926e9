"""Fuzz the API with schemathesis against its own OpenAPI schema (the longer run).

Every operation gets `--examples` positive cases (valid per the schema) and as many
negative ones (invalid on purpose); each answer must not be a 5xx, must have a status
code, content type and body that the schema documents. Limits are lowered through
Settings so that a run stays bounded on 2 cores (the same checks as the test suite,
which runs 50 examples per operation).

    python -m benchmarks.fuzz --examples 300
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.config import get_settings
from app.main import create_app

SMALL_LIMITS = {
    "FFN_LAB_MAX_TOKENS": "8",
    "FFN_LAB_MAX_D_MODEL": "32",
    "FFN_LAB_MAX_D_FF": "64",
    "FFN_LAB_MAX_PARAMS": "10000",
    # issue 13: short trainings (the work bound keeps each well under a second)
    "FFN_LAB_MAX_TRAIN_STEPS": "20",
    "FFN_LAB_MAX_TRAIN_WORK": "500000000",
}
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
_PATHS = create_app().openapi()["paths"]
CASES: list[tuple[str, str, GenerationMode]] = [
    (method.upper(), path, mode)
    for path, item in _PATHS.items()
    for method, operation in item.items()
    for mode in GenerationMode
    # an operation without a body or parameters has no invalid input to generate
    if mode is GenerationMode.POSITIVE or "requestBody" in operation or "parameters" in operation
]
"""(method, path, mode) of every documented operation: positive, and negative where possible."""


@contextmanager
def limits(env: dict[str, str]) -> Iterator[None]:
    """Set FFN_LAB_* variables for the duration (Settings are re-read), then restore them."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    get_settings.cache_clear()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        get_settings.cache_clear()


def fuzz_operation(
    method: str, path: str, mode: GenerationMode, examples: int, random_seed: int = 0
) -> Counter[int]:
    """Run `examples` generated cases of one operation through all CHECKS.

    Returns how many answers had each status code.

    Raises the first failing check (schemathesis' failure names the case and the check).
    Call inside `limits(...)`: the app reads its limits when it is made here.
    """
    api = schemathesis.openapi.from_asgi("/openapi.json", create_app())
    strategy = api[path][method].as_strategy(generation_mode=mode)
    statuses: Counter[int] = Counter()

    @seed(random_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: schemathesis.Case[Any]) -> None:
        response = case.call_and_validate(checks=CHECKS)
        statuses[response.status_code] += 1

    run()
    return statuses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="per operation and mode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    failures = 0
    total = 0
    with limits(SMALL_LIMITS):
        for method, path, mode in CASES:
            t0 = time.perf_counter()
            try:
                statuses = fuzz_operation(method, path, mode, args.examples, args.seed)
            except Exception as exc:  # report every operation, then fail
                failures += 1
                print(f"FAIL {method} {path} [{mode.value}]: {exc}")
                continue
            n = sum(statuses.values())
            total += n
            ms = (time.perf_counter() - t0) * 1000
            by_status = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
            print(f"ok   {method} {path} [{mode.value}]: {n} cases ({by_status}), {ms:.0f} ms")
    print(
        f"{total} cases over {len(CASES)} operation/mode pairs in "
        f"{time.perf_counter() - start:.1f} s; {failures} failing"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
