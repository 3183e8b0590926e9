"""Predict-then-reveal questions (app.lab.questions): choices from the state, answers from the
real FFN, checked against counts written here from the shapes and the tiny preset by hand."""

from __future__ import annotations

import numpy as np
import pytest

from app.lab.limits import Limits
from app.lab.python_api import default_cache
from app.lab.questions import KINDS, answer_question, build_question
from app.model.presets import PRESETS
from tests import reference


def answer(kind: str, state: dict[str, object]) -> tuple[list[object], object]:
    q = build_question(kind, state, "q1")
    a = answer_question(q, default_cache(), Limits())
    values = {c["id"]: c["value"] for c in q.choices}
    return [values[c] for c in a.correct], a.value


@pytest.mark.parametrize(
    ("activation", "bias", "expected"),
    [
        ("relu", True, 2 * 8 * 24 + 24 + 8),
        ("relu", False, 2 * 8 * 24),
        ("swiglu", True, 3 * 8 * 24 + 2 * 24 + 8),
        ("swiglu", False, 3 * 8 * 24),
    ],
)
def test_parameter_count(activation: str, bias: bool, expected: int) -> None:
    state = {"d_model": 8, "d_ff": 24, "activation": activation, "bias": bias, "tokens": 3}
    picked, value = answer("parameter_count", state)
    assert picked == [expected] and value == expected
    picked, value = answer("params_when_t_doubles", state)
    assert picked == [expected]


def test_rows_changed_one_row_or_none() -> None:
    picked, value = answer("rows_changed", {"tokens": 5, "position": 4, "activation": "silu"})
    assert picked == [1] and value == 1
    picked, value = answer("rows_changed", {"tokens": 5, "position": 2, "scale": 0})
    assert picked == [0] and value == 0


def test_zero_fraction_tiny_by_hand() -> None:
    tiny = next(p for p in PRESETS if p.id == "tiny")
    assert tiny.weights is not None and tiny.tokens is not None
    pre = np.array(tiny.tokens) @ np.array(tiny.weights["w1"]) + np.array(tiny.weights["b1"])
    share = float(np.mean(reference.relu(pre) == 0))
    picked, value = answer("zero_fraction", {"preset": "tiny", "d_model": 2, "d_ff": 4})
    assert value == pytest.approx(share)
    lo, hi = picked[0]  # type: ignore[misc]
    assert lo <= share < hi


def test_shape_of_counts_every_tensor_of_that_shape() -> None:
    picked, _ = answer("shape_of", {"d_model": 16, "d_ff": 64, "tokens": 6})
    assert picked == ["hidden"]
    picked, _ = answer("shape_of", {"d_model": 32, "d_ff": 32, "tokens": 6})
    assert sorted(picked) == ["hidden", "input", "output"]  # type: ignore[type-var]


def test_every_kind_builds_distinct_choices() -> None:
    for kind in KINDS:
        q = build_question(kind, {"bias": False, "tokens": 1}, "q2")
        values = [repr(c["value"]) for c in q.choices]
        assert len(values) == len(set(values)) >= 2, (kind, values)
        assert all("why" not in c for c in q.public()["choices"])


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        build_question("vibes", {}, "q3")


def test_the_rows_changed_sentence_is_singular_for_one_row() -> None:
    """One row changed reads "1 row changed (position 4)", not "1 row(s)"."""
    q = build_question("rows_changed", {"tokens": 5, "position": 4}, "q1")
    a = answer_question(q, default_cache(), Limits())
    assert a.text == "session.answer.rows_changed_one" and a.params["rows"] == "4"


@pytest.mark.parametrize(("activation", "label"), [("relu", "ReLU"), ("swiglu", "SwiGLU")])
def test_prompts_name_the_activation_as_the_page_does(activation: str, label: str) -> None:
    """The prompt reads "Under ReLU", not the URL's id "relu"; the id stays for programs."""
    state = {"d_model": 8, "d_ff": 24, "activation": activation, "tokens": 3}
    for kind in ("zero_fraction", "parameter_count"):
        q = build_question(kind, state, "q1")
        assert q.params["activation_label"] == label and q.params["activation"] == activation
