"""Checks of submitted values, shared by every request model: numbers and text.

Each raises ValueError with a message that names the field, the value and the rule;
Pydantic turns it into a 422.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np
import numpy.typing as npt

from app.config import get_settings


def as_float_array(value: Any, field: str, ndim: int) -> npt.NDArray[np.float32]:
    """Convert a nested list of numbers to float32, raising ValueError that names the field.

    Rejects ragged rows, non-finite values and |values| above the `max_abs_value` limit
    (which also rules out numbers that overflow float32, such as 1e39).
    """
    limit = get_settings().max_abs_value
    try:
        array = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError):
        if ndim == 2 and isinstance(value, list):
            lengths = [len(row) if isinstance(row, list) else None for row in value]
            raise ValueError(
                f"{field} must be a rectangular list of numbers; row lengths are {lengths}"
            ) from None
        raise ValueError(f"{field} must be a list of numbers") from None
    if array.size == 0:
        raise ValueError(f"{field} must not be empty: give at least one row of numbers")
    if array.ndim != ndim:
        kind = "a list of rows of numbers" if ndim == 2 else "a flat list of numbers"
        raise ValueError(f"{field} must be {kind}, got {array.ndim} nesting level(s)")
    bad = ~np.isfinite(array) | (np.abs(array) > limit)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = "".join(f"[{i}]" for i in index)
        raise ValueError(
            f"{field}{where} = {float(array[index])!r} is not allowed: values must be finite "
            f"and within ±{limit:g} (setting max_abs_value)"
        )
    return array.astype(np.float32)


_ALLOWED_CONTROL = frozenset("\t\n\r")


def check_text(value: str, field: str = "text") -> str:
    """Validate text for the pretrained model before it is tokenised.

    Any Unicode letters, digits, punctuation and emoji are fine; rejected with a
    ValueError that names the field, the value and the rule: an empty or blank text,
    more than `max_text_chars` characters, and control characters other than tab and
    newline (e.g. NUL, ESC).
    """
    limit = get_settings().max_text_chars
    if not value.strip():
        raise ValueError(f"{field} is empty: type between 1 and {limit:,} characters")
    if len(value) > limit:
        raise ValueError(
            f"{field} has {len(value):,} characters; the limit is {limit:,} "
            "(setting max_text_chars)"
        )
    for i, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Cs") and char not in _ALLOWED_CONTROL:
            raise ValueError(
                f"{field}[{i}] is the control character U+{ord(char):04X}, which is not "
                "allowed: use letters, digits, punctuation, spaces, tabs and newlines"
            )
    return value
