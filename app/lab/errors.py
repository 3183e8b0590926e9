"""Domain errors of the experiments layer: `ValueError` subclasses, no HTTP.

The API maps them to the same answers it has always given (app.api.middleware.errors):
`InvalidValue` is a 422 naming the body field, like Pydantic's; `ModelUnavailable` is a 503
that says how to install the pretrained weights.
"""

from __future__ import annotations

from typing import Any


class LabError(ValueError):
    """Base of every error `app.lab` raises for something a caller can fix."""


class Refusal(LabError):
    """A refused value with a stable `code` and its `params` (JSON scalars), so that a page
    can say it in its reader's language; str(self) is the English message API users read.

    The API adds `code` and `params` to the 422 item (app.api.middleware.errors); the codes
    are listed in the catalogs as `errors.code.<code>` (static/i18n/*/errors.json).
    """

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


class InvalidValue(LabError):
    """A value of the request is not allowed; `field` names it (e.g. "position", "text").

    Attributes:
        field: the argument (API body field) at fault.
        message: what is wrong and what is allowed, in a student's words.
        value: the value given, when it helps to echo it (else None).
    """

    def __init__(
        self, field: str, message: str, value: Any = None, code: str | None = None, **params: Any
    ) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.value = value
        self.code = code
        self.params = params


class ModelUnavailable(LabError):
    """The pretrained model's weights package is not installed; the message says how."""
