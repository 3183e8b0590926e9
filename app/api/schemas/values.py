"""Checks of submitted values, shared by every request model (they live in `app.lab.values`
and `app.model.activations`, plain Python, so that the notebook API checks the same way);
Pydantic turns their ValueErrors into 422s."""

from __future__ import annotations

from app.lab.values import as_float_array, check_max, check_text, check_weights
from app.model.activations import get_activation

__all__ = ["as_float_array", "check_max", "check_text", "check_weights", "known_activation"]


def known_activation(value: str) -> str:
    """`value` when it is a supported activation key, else `get_activation`'s ValueError
    (it lists the supported names). The request models' `activation` field validator:
    `_known_activation = field_validator("activation")(known_activation)`."""
    get_activation(value)
    return value
