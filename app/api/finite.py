"""Finite answers: an answer with a number past float32's range is a 422, never a `null`.

Inputs within ±max_abs_value (10,000) times weights within the same bound can multiply past
float32's largest number (3.4e38): a gated FFN squares its pre-activations, a norm squares
its values. JSON has no Infinity or NaN (orjson writes `null`, which breaks the answer's
schema), so such an answer is refused with a 422 on `tokens` that names the first tensor
that overflowed (its path in the answer) and the input scale that would fit: the request is
run again with its tokens scaled down by 10, 100, ... and the first finite scale is named.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from fastapi import Response

from app.api.encoding import json_response
from app.lab.errors import InvalidValue

FLOAT32_MAX = float(np.finfo(np.float32).max)
RETRIES = 8
"""Scales tried for the hint: the tokens divided by 10, 100, ..., 10**RETRIES."""


def first_non_finite(content: Any, path: str = "") -> str | None:
    """The path ("variants[2].output") of the first NaN or ±Inf in `content`, or None."""
    if isinstance(content, float):
        return None if math.isfinite(content) else path
    if isinstance(content, np.ndarray):
        if content.dtype.kind in "fc" and not bool(np.isfinite(content).all()):
            return path
        return None
    if isinstance(content, np.floating):
        return None if bool(np.isfinite(content)) else path
    if isinstance(content, dict):
        for key, value in content.items():
            found = first_non_finite(value, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(content, (list, tuple)):
        if content and all(type(v) is float for v in content):
            return None if all(map(math.isfinite, content)) else _first(content, path)
        for i, value in enumerate(content):
            found = first_non_finite(value, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _first(values: list[float] | tuple[float, ...], path: str) -> str:
    for i, value in enumerate(values):
        if not math.isfinite(value):
            return f"{path}[{i}]"
    return path


def _tensor(path: str) -> str:
    """The tensor's name: the path without list indices ("variants[2].output" stays)."""
    while path.endswith("]"):
        path = path[: path.rindex("[")]
    return path


def scaled(spec: Any, factor: float) -> Any | None:
    """`spec` with its tokens multiplied by `factor`, or None when it has no given tokens."""
    tokens = getattr(spec, "tokens_array", None)
    if tokens is None or isinstance(spec, type) or not dataclasses.is_dataclass(spec):
        return None
    return dataclasses.replace(spec, tokens_array=(tokens * np.float32(factor)))  # type: ignore[type-var]


def finite_response(
    content: Any, spec: Any = None, again: Callable[[Any], Any] | None = None
) -> Response:
    """`content` as JSON when every number in it is finite; else an overflow refusal.

    `again(spec)` recomputes the answer for another spec (the same request with its tokens
    scaled down): the first scale whose answer is finite is named in the refusal.

    Raises:
        InvalidValue: field "tokens", code "overflow", params tensor (the path in the
            answer), max (float32's largest), scale (the largest |token| that fits); code
            "overflow_weights" (scale "-") when the tokens were not given or no scale down
            to 1e-8 of them fits.
    """
    path = first_non_finite(content)
    if path is None:
        return json_response(content)
    raise overflow(_tensor(path), spec, again)


def overflow(tensor: str, spec: Any, again: Callable[[Any], Any] | None) -> InvalidValue:
    """The 422 of an answer whose `tensor` overflowed float32 (see `finite_response`)."""
    tokens = getattr(spec, "tokens_array", None)
    now = float(np.abs(tokens).max()) if tokens is not None and tokens.size else None
    fit = None
    if again is not None and now:
        for k in range(1, RETRIES + 1):
            smaller = scaled(spec, 10.0**-k)
            if smaller is None or first_non_finite(again(smaller)) is None:
                fit = None if smaller is None else now * 10.0**-k
                break
    max_text = f"{FLOAT32_MAX:.3g}"
    if fit is not None:
        hint = f"inputs within ±{fit:.3g} would fit (the tokens given reach ±{now:.6g})"
        scale = f"{fit:.3g}"
    else:
        hint = "smaller inputs or smaller weights would fit"
        scale = "-"
    error = InvalidValue(
        "tokens",
        f"{tensor} overflowed: its numbers went past the largest float32 ({max_text}), "
        f"which JSON cannot carry; {hint}",
        None,
        "overflow" if fit is not None else "overflow_weights",
    )
    error.params = {"tensor": tensor, "max": max_text, "scale": scale}
    return error
