"""Bodies and answers of the class-session endpoints (app/api/routes/sessions.py).

`validate_state` checks a lecturer's page state against the page's URL schema
(static/js/state.js `makeSchema`): the same keys, types, ranges and allowed values, so that
a state a student's page receives is one a link could carry. Own numbers (`x`, `w`, kept in
a link's fragment) and the lecturer's own view (`lang`, `embed`, `hide`, `big`) are not part
of it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.config import Settings
from app.lab.questions import KINDS
from app.model.activations import ACTIVATIONS
from app.model.presets import PRESETS

HIDEABLE = (
    "preset", "d_model", "d_ff", "tokens", "activation", "bias", "seed", "input_seed",
    "mode", "dropout", "panel", "lang", "position", "scale",
)  # fmt: skip
"""state.js HIDEABLE (not sent in a session; listed for the schema's completeness)."""

LESSON_STEPS_MAX = 100
"""Upper bound of `step` (the page has 20 lesson steps; the page itself refuses beyond)."""

SEED_MAX = 2**31 - 1

Spec = dict[str, Any]


def state_schema(settings: Settings, panels: list[str]) -> dict[str, Spec]:
    """The URL keys a session's state may carry: name -> {type, min/max or values}."""
    return {
        "preset": {"type": "enum", "values": ["custom", *(p.id for p in PRESETS)]},
        "d_model": {"type": "int", "min": 1, "max": settings.max_d_model},
        "d_ff": {"type": "int", "min": 1, "max": settings.max_d_ff},
        "activation": {"type": "enum", "values": list(ACTIVATIONS)},
        "tokens": {"type": "int", "min": 1, "max": settings.max_tokens},
        "bias": {"type": "bool"},
        "seed": {"type": "int", "min": 0, "max": SEED_MAX},
        "input_seed": {"type": "int", "min": 0, "max": SEED_MAX},
        "position": {"type": "int", "min": 0, "max": settings.max_tokens - 1},
        "scale": {"type": "float", "min": 0, "max": 5},
        "mode": {"type": "enum", "values": ["eval", "train"]},
        "dropout": {"type": "float", "min": 0, "max": 0.9},
        "panel": {"type": "enum", "values": ["", *panels]},
        "source": {"type": "enum", "values": ["random", "own", "text"]},
        "text": {"type": "string", "max_length": settings.max_text_chars},
        "layer": {"type": "int", "min": 0, "max": 5},
        "lesson": {"type": "bool"},
        "step": {"type": "int", "min": 1, "max": LESSON_STEPS_MAX},
        "heads": {"type": "int", "min": 1, "max": settings.max_heads},
        "norm": {"type": "enum", "values": ["post", "pre"]},
        "match": {"type": "bool"},
        "dropout_seed": {"type": "int", "min": 0, "max": SEED_MAX - 1},
        "unit": {"type": "int", "min": -1, "max": settings.max_d_ff - 1},
        "layers": {"type": "int", "min": 1, "max": 12},
        "stack_attention": {"type": "bool"},
        "stack_share": {"type": "bool"},
        "stack_norm": {"type": "enum", "values": ["post", "pre"]},
        "train_d_ff": {"type": "int", "min": 1, "max": 256},
        "train_act": {"type": "enum", "values": ["relu", "gelu", "silu"]},
        "train_lr": {"type": "float", "min": 0.0001, "max": 1},
        "train_steps": {"type": "int", "min": 1, "max": 1000},
        "train_compare": {"type": "bool"},
        "cheap_rank": {"type": "int", "min": 0, "max": settings.max_d_model},
    }


NOT_SHARED = {
    "lang": "each screen keeps its own language",
    "embed": "each screen keeps its own layout",
    "hide": "each screen keeps its own controls",
    "big": "each screen keeps its own text size",
    "x": "own numbers stay in the lecturer's browser",
    "w": "own numbers stay in the lecturer's browser",
}
"""URL keys a session does not carry, with the reason a 422 gives."""


def _error(name: str, value: Any, msg: str) -> dict[str, Any]:
    return {"loc": ("body", name), "msg": msg, "type": "value_error", "input": value}


def _check(name: str, spec: Spec, value: Any) -> str | None:
    kind = spec["type"]
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} must be a whole number from {spec['min']} to {spec['max']}"
        if not spec["min"] <= value <= spec["max"]:
            return f"{name} = {value} is outside {spec['min']} to {spec['max']}"
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            return f"{name} must be a number from {spec['min']:g} to {spec['max']:g}"
        if not spec["min"] <= value <= spec["max"]:
            return f"{name} = {value:g} is outside {spec['min']:g} to {spec['max']:g}"
    elif kind == "bool":
        if not isinstance(value, bool):
            return f"{name} must be true or false"
    elif kind == "enum":
        if value not in spec["values"]:
            allowed = ", ".join(repr(v) for v in spec["values"])
            return f"{name} must be one of {allowed}"
    elif kind == "string":
        if not isinstance(value, str):
            return f"{name} must be text"
        if len(value) > spec["max_length"]:
            return f"{name} is {len(value)} characters long; at most {spec['max_length']}"
    return None


def state_errors(raw: Any, schema: dict[str, Spec]) -> list[dict[str, Any]]:
    """Pydantic-style error items (loc ("body", key)) for a state; empty when it is valid."""
    if not isinstance(raw, dict):
        return [_error("state", None, "the body must be a JSON object of the page's URL keys")]
    errors = []
    for name, value in raw.items():
        if name in NOT_SHARED:
            errors.append(
                _error(name, value, f"{name} is not part of a session: {NOT_SHARED[name]}")
            )
        elif name not in schema:
            known = ", ".join(schema)
            errors.append(_error(name, None, f"{name!r} is not a page setting; settings: {known}"))
        else:
            msg = _check(name, schema[name], value)
            if msg:
                errors.append(_error(name, value, msg))
    return errors


class SessionCreated(BaseModel):
    """POST /api/sessions (201): share `code`/`join_url`; keep `presenter_token` to yourself."""

    code: str = Field(description="6 characters without 0/O/1/I, e.g. K7QF3M")
    join_url: str = Field(description="where students go: /join/{code}")
    presenter_token: str = Field(description="Authorization: Bearer <token> for lecturer actions")
    qr_svg: str = Field(description="an SVG QR code of the join link (absolute URL)")
    join_absolute: str = Field(description="the join link with this server's address")


class SessionOut(BaseModel):
    """GET /api/sessions/{code}: what a screen joining now needs."""

    code: str
    join_url: str
    version: int
    state: dict[str, Any]
    question: dict[str, Any] | None
    reveal: dict[str, Any] | None


class StateVersion(BaseModel):
    """PUT /api/sessions/{code}/state: the state's new version (1, 2, ...)."""

    version: int


class QuestionRequest(BaseModel):
    """POST /api/sessions/{code}/questions."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal[KINDS] = Field(  # type: ignore[valid-type]
        description="rows_changed, zero_fraction, parameter_count, params_when_t_doubles, "
        "shape_of or gelu_zeros"
    )


class AnswerRequest(BaseModel):
    """POST /api/sessions/{code}/answers: one answer per device, changeable until the reveal."""

    model_config = ConfigDict(extra="forbid")
    question_id: str = Field(min_length=1, max_length=32)
    choice: str = Field(min_length=1, max_length=8)
    device: str = Field(
        min_length=8,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="a random id the browser keeps (localStorage); no name, nothing personal",
    )


class AnswerAccepted(BaseModel):
    """The answer is counted."""

    question_id: str
    choice: str
