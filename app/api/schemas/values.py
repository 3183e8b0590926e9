"""Checks of submitted values, shared by every request model (they live in `app.lab.values`
and `app.model.activations`, plain Python, so that the notebook API checks the same way);
Pydantic turns their ValueErrors into 422s."""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import ValidatorFunctionWrapHandler, WrapValidator

from app.lab.values import as_float_array, check_max, check_text, check_weights
from app.model.activations import get_activation

__all__ = [
    "ParsedMatrix",
    "ParsedVector",
    "as_float_array",
    "check_max",
    "check_text",
    "check_weights",
    "known_activation",
]


def _parsed_array(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """An ndarray is a field the body reader already read as a rectangular array of finite
    numbers (`app.api.array_body`; JSON itself cannot give one): taken as it is, for the
    model's own checks (`as_float_array`). Anything else is checked number by number."""
    return value if isinstance(value, np.ndarray) else handler(value)


ParsedMatrix = Annotated[list[list[float]], WrapValidator(_parsed_array)]
"""Rows of numbers; in a request model with `array_fields`, a float64 ndarray when the body
was read by `app.api.array_body` (the JSON schema is the list's)."""

ParsedVector = Annotated[list[float], WrapValidator(_parsed_array)]
"""A list of numbers, or a float64 ndarray read by `app.api.array_body` (see ParsedMatrix)."""


def known_activation(value: str) -> str:
    """`value` when it is a supported activation key, else `get_activation`'s ValueError
    (it lists the supported names). The request models' `activation` field validator:
    `_known_activation = field_validator("activation")(known_activation)`."""
    get_activation(value)
    return value
