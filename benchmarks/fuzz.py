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
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.config import get_settings
from app.main import create_app
from app.model.activations import ACTIVATIONS
from app.model.ffn import FFNConfig, expected_shapes
from tests.layer_files import layer_files

SMALL_LIMITS = {
    "FFN_LAB_MAX_TOKENS": "8",
    "FFN_LAB_MAX_D_MODEL": "32",
    "FFN_LAB_MAX_D_FF": "64",
    "FFN_LAB_MAX_PARAMS": "10000",
    # short trainings (the work bound keeps each well under a second)
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


SUBMITTED = "submitted weights answered 200"
BIAS_FREE = "bias-free submitted weights answered 200"
"""Keys of `fuzz_operation`'s `reached` counter: submitted-weight bodies that ran."""

_NUMBER = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def submitted_weights_body(draw: st.DrawFn, properties: frozenset[str]) -> dict[str, Any]:
    """A body with consistent submitted weights and tokens (shapes that fit the config),
    with and without biases, plain and gated: the schema alone almost never generates one,
    so bias-free LLaMA/T5-style bodies would go untested. Only the fields the
    operation's schema has (`properties`) are sent."""
    d_model = draw(st.integers(1, 4))
    d_ff = draw(st.integers(1, 6))
    activation = draw(st.sampled_from(list(ACTIVATIONS)))
    bias = draw(st.booleans())
    t = draw(st.integers(1, 3))

    def matrix(rows: int, cols: int) -> Any:
        return draw(
            st.lists(st.lists(_NUMBER, min_size=cols, max_size=cols), min_size=rows, max_size=rows)
        )

    shapes = expected_shapes(FFNConfig(d_model, d_ff, activation, bias))
    weights = {
        name: matrix(*shape) if len(shape) == 2 else matrix(1, shape[0])[0]
        for name, shape in shapes.items()
    }
    body: dict[str, Any] = {
        "d_model": d_model,
        "d_ff": d_ff,
        "activation": activation,
        "bias": bias,
        "tokens": matrix(t, d_model),
        "weights": weights,
        "position": draw(st.integers(0, t - 1)),
        "scale": draw(st.floats(0.0, 2.0)),
    }
    return {k: v for k, v in body.items() if k in properties}


def _body_properties(api: Any, path: str, method: str) -> frozenset[str]:
    """The property names of the operation's JSON body schema (empty without a body)."""
    spec = api.raw_schema
    body = spec["paths"][path][method.lower()].get("requestBody")
    if body is None:
        return frozenset()
    content = body.get("content", {}).get("application/json")
    if content is None:  # a raw file body (e.g. /api/weights/upload): no JSON properties
        return frozenset()
    ref = content["schema"].get("$ref", "")
    schema = spec["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
    return frozenset(schema.get("properties", {}))


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


FILE_BODIES = frozenset({"/api/weights/upload"})
"""Operations whose body is a layer file: half their positive cases are real layer files of
every format, valid or corrupted (tests/layer_files.py), besides the schema's random bytes."""


def fuzz_operation(
    method: str,
    path: str,
    mode: GenerationMode,
    examples: int,
    random_seed: int = 0,
    reached: Counter[str] | None = None,
) -> Counter[int]:
    """Run `examples` generated cases of one operation through all CHECKS.

    Positive cases of an operation that takes `weights` are drawn half from the schema,
    half from `submitted_weights_body` (consistent shapes, biases on or off, plain or
    gated). Returns how many answers had each status code; `reached[SUBMITTED]` counts
    the submitted-weight bodies answered 200, `reached[BIAS_FREE]` those without biases.

    Raises the first failing check (schemathesis' failure names the case and the check).
    Call inside `limits(...)`: the app reads its limits when it is made here.
    """
    api = schemathesis.openapi.from_asgi("/openapi.json", create_app())
    operation = api[path][method]
    strategy = operation.as_strategy(generation_mode=mode)
    properties = _body_properties(api, path, method)
    if mode is GenerationMode.POSITIVE and "weights" in properties:
        submitted = submitted_weights_body(properties).map(
            lambda body: operation.Case(body=body, media_type="application/json")
        )
        strategy = st.one_of(strategy, submitted)
    if mode is GenerationMode.POSITIVE and path in FILE_BODIES:
        files = layer_files().map(
            lambda file: operation.Case(
                body=file[1],
                media_type="application/octet-stream",
                query={"filename": file[0]},
            )
        )
        strategy = st.one_of(strategy, files)
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
        # a generous read timeout: a busy shared machine can take seconds to stream a training
        response = case.call_and_validate(checks=CHECKS, timeout=60)
        statuses[response.status_code] += 1
        body = case.body if isinstance(case.body, dict) else {}
        if reached is not None and response.status_code == 200 and "weights" in body:
            reached[SUBMITTED] += 1
            reached[BIAS_FREE] += body.get("bias") is False

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
    reached: Counter[str] = Counter()
    with limits(SMALL_LIMITS):
        for method, path, mode in CASES:
            t0 = time.perf_counter()
            try:
                statuses = fuzz_operation(method, path, mode, args.examples, args.seed, reached)
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
        f"{time.perf_counter() - start:.1f} s; {failures} failing; "
        f"{reached[SUBMITTED]} with submitted weights answered 200 "
        f"({reached[BIAS_FREE]} of them bias-free)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
