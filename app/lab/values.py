"""Checks of submitted values: numbers, text, limits and weight shapes (plain Python).

Each raises ValueError with a message that names the field, the value and the rule; the
API's request models call them (Pydantic turns the error into a 422) and so does the notebook
API (`app.lab.spec.specs`), so both refuse the same values with the same words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from app.lab.errors import Refusal
from app.lab.limits import Limits
from app.model.ffn import FFNConfig, expected_shapes


def as_float_array(
    value: Any, field: str, ndim: int, max_abs: float = Limits.max_abs_value
) -> npt.NDArray[np.float32]:
    """Convert a nested list of numbers to float32, raising ValueError that names the field.

    Rejects ragged rows, non-finite values and |values| above the `max_abs_value` limit
    (which also rules out numbers that overflow float32, such as 1e39).
    """
    limit = max_abs
    try:
        array = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError):
        if ndim == 2 and isinstance(value, list):
            lengths = [len(row) if isinstance(row, list) else None for row in value]
            raise Refusal(
                "ragged",
                f"{field} must be a rectangular list of numbers; row lengths are {lengths}",
                field=field,
                lengths=str(lengths),
            ) from None
        raise Refusal("not_numbers", f"{field} must be a list of numbers", field=field) from None
    if array.size == 0:
        raise Refusal(
            "empty", f"{field} must not be empty: give at least one row of numbers", field=field
        )
    if array.ndim != ndim:
        kind = "a list of rows of numbers" if ndim == 2 else "a flat list of numbers"
        raise Refusal(
            "nesting" if ndim == 2 else "nesting_flat",
            f"{field} must be {kind}, got {array.ndim} nesting level(s)",
            field=field,
            levels=int(array.ndim),
        )
    bad = ~np.isfinite(array) | (np.abs(array) > limit)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = "".join(f"[{i}]" for i in index)
        raise Refusal(
            "bad_value",
            f"{field}{where} = {float(array[index])!r} is not allowed: values must be finite "
            f"and within ±{limit:g}",
            field=f"{field}{where}",
            value=repr(float(array[index])),
            limit=f"{limit:g}",
        )
    return array.astype(np.float32)


_ALLOWED_CONTROL = frozenset("\t\n\r")


def check_text(value: str, field: str = "text", max_chars: int = Limits.max_text_chars) -> str:
    """Validate text for the pretrained model before it is tokenised.

    Any Unicode letters, digits, punctuation and emoji are fine; rejected with a
    ValueError that names the field, the value and the rule: an empty or blank text,
    more than `max_text_chars` characters, and control characters other than tab and
    newline (e.g. NUL, ESC).
    """
    limit = max_chars
    if not value.strip():
        raise Refusal(
            "text_empty", f"{field} is empty: type between 1 and {limit:,} characters", limit=limit
        )
    if len(value) > limit:
        raise Refusal(
            "text_too_long",
            f"{field} has {len(value):,} characters; the limit is {limit:,}",
            count=len(value),
            limit=limit,
        )
    for i, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Cs") and char not in _ALLOWED_CONTROL:
            raise Refusal(
                "text_control",
                f"{field}[{i}] is the control character U+{ord(char):04X}, which is not "
                "allowed: use letters, digits, punctuation, spaces, tabs and newlines",
                index=i,
                char=f"U+{ord(char):04X}",
            )
    return value


def check_max(field: str, value: int, limit: int) -> None:
    """Raise ValueError when `value` is over `limit`: field, value and limit in the message,
    never the server setting's name (students read it)."""
    if value > limit:
        raise Refusal(
            "over_limit",
            f"{field} = {value} is over the limit of {limit}",
            field=field,
            value=value,
            limit=limit,
        )


def check_weights(
    given: Mapping[str, Any],
    config: FFNConfig,
    max_numbers: int,
    max_abs: float = Limits.max_abs_value,
) -> dict[str, npt.NDArray[np.float32]]:
    """The submitted weights (nested lists or arrays, by name; None = absent) as float32
    arrays in the paper's orientation, checked against the shapes `config` needs.

    Raises:
        ValueError: a weight that is not used, one that is missing, more than `max_numbers`
            numbers in all, a wrong shape, or a value check of `as_float_array`.
    """
    expected = expected_shapes(config)
    given = {k: v for k, v in given.items() if v is not None}
    for name in given:
        if name not in expected:
            bias = name.startswith("b")
            why = "bias is false" if bias else f"{config.activation!r} is not gated"
            raise Refusal(
                "weight_unused_bias" if bias else "weight_unused_gate",
                f"weights.{name} was given but is not used: {why}",
                name=f"weights.{name}",
                activation=config.activation,
            )
    total = 0
    arrays: dict[str, npt.NDArray[np.float32]] = {}
    for name, shape in expected.items():
        if name not in given:
            raise Refusal(
                "weight_missing",
                f"weights.{name} is required for activation {config.activation!r} with "
                f"bias={str(config.bias).lower()}; expected shape {list(shape)}",
                name=f"weights.{name}",
                activation=config.activation,
                shape=" × ".join(map(str, shape)),
            )
        total += int(np.prod(shape))
        if total > max_numbers:
            raise Refusal(
                "weights_too_many", f"weights hold over {max_numbers:,} numbers", limit=max_numbers
            )
        array = as_float_array(given[name], f"weights.{name}", ndim=len(shape), max_abs=max_abs)
        if array.shape != shape:
            raise Refusal(
                "weight_shape",
                f"weights.{name} has shape {list(array.shape)}; expected {list(shape)} for "
                f"d_model={config.d_model}, d_ff={config.d_ff}",
                name=f"weights.{name}",
                shape=" × ".join(map(str, array.shape)),
                expected=" × ".join(map(str, shape)),
                d_model=config.d_model,
                d_ff=config.d_ff,
            )
        arrays[name] = array
    return arrays
