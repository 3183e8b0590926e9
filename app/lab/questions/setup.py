"""The FFN a session's page state describes, as keyword arguments of `app.lab.spec.forward_spec`
(the POST /api/forward body), so that a question runs the very forward pass the page runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.model.ffn import FFNConfig
from app.model.presets import PRESETS

DEFAULTS: dict[str, Any] = {
    "preset": "custom",
    "d_model": 16,
    "d_ff": 64,
    "activation": "relu",
    "tokens": 6,
    "bias": True,
    "seed": 0,
    "input_seed": 0,
    "position": 0,
    "scale": 1.0,
}
"""The page's defaults (static/js/state.js) for the keys a question reads."""


def read(state: Mapping[str, Any], key: str) -> Any:
    """`state[key]`, or the page's default when the state leaves it out."""
    return state.get(key, DEFAULTS[key])


def ffn_body(state: Mapping[str, Any], **overrides: Any) -> dict[str, Any]:
    """The forward body of `state`: shape, activation, biases, weight seed and input tokens.

    A preset with fixed numbers (the tiny one) brings its own weights and tokens, as the page
    sends them; otherwise T = `tokens` N(0, 1) tokens drawn by `input_seed`. Typed text and
    pasted vectors stay in the students' browsers: a question uses the seeded tokens of the
    same T and shape. `overrides` replace fields (e.g. activation="gelu").
    """
    fixed = next((p for p in PRESETS if p.id == read(state, "preset") and p.weights), None)
    body: dict[str, Any] = {
        "d_model": int(read(state, "d_model")),
        "d_ff": int(read(state, "d_ff")),
        "activation": str(read(state, "activation")),
        "seed": int(read(state, "seed")),
        "bias": bool(read(state, "bias")),
        "display": "full",
    }
    if fixed is not None and fixed.tokens is not None:
        body["tokens"] = fixed.tokens
        body["weights"] = fixed.weights
    else:
        body["num_tokens"] = int(read(state, "tokens"))
        body["input_seed"] = int(read(state, "input_seed"))
    body.update(overrides)
    return body


def token_count(state: Mapping[str, Any]) -> int:
    """T of the state's FFN (a fixed-token preset's own T)."""
    fixed = next((p for p in PRESETS if p.id == read(state, "preset") and p.tokens), None)
    return len(fixed.tokens) if fixed is not None and fixed.tokens else int(read(state, "tokens"))


def ffn_config(state: Mapping[str, Any], **overrides: Any) -> FFNConfig:
    """The FFN's shape (d_model, d_ff, activation, bias) in `state`."""
    values: dict[str, Any] = {
        "d_model": int(read(state, "d_model")),
        "d_ff": int(read(state, "d_ff")),
        "activation": str(read(state, "activation")),
        "bias": bool(read(state, "bias")),
    }
    values.update(overrides)
    return FFNConfig(**values)
