"""Checks of submitted values, shared by every request model (they live in `app.lab.values`,
plain Python, so that the notebook API checks the same way); Pydantic turns their
ValueErrors into 422s."""

from __future__ import annotations

from app.lab.values import as_float_array, check_max, check_text, check_weights

__all__ = ["as_float_array", "check_max", "check_text", "check_weights"]
