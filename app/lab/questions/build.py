"""Questions: a prompt and its choices, built from the session's page state.

Every prompt and choice is a catalog key (`session.q.<kind>`, `session.choice.<...>`) with
parameters, so each screen shows it in its own language. A choice carries the number or
name it stands for (`value`), which the reveal (app.lab.questions.reveal) compares with the
FFN's own answer. Nothing here runs the FFN.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.analysis import param_counts
from app.lab.questions.setup import ffn_config, read, token_count
from app.model.activations import get_activation

KINDS: tuple[str, ...] = (
    "rows_changed",
    "zero_fraction",
    "parameter_count",
    "params_when_t_doubles",
    "shape_of",
    "gelu_zeros",
)
"""The question kinds, in the order the lecturer's menu lists them."""

FRACTION_BINS: tuple[tuple[float, float], ...] = (
    (0.0, 0.2),
    (0.2, 0.4),
    (0.4, 0.6),
    (0.6, 0.8),
    (0.8, 1.0),
)
"""zero_fraction's bins: [lo, hi) as shares of the T x d_ff hidden values (the last one
includes 1.0)."""

GELU_BINS: tuple[tuple[str, float, float], ...] = (
    ("none", 0.0, 0.0),
    ("few", 0.0, 0.1),
    ("half", 0.1, 0.9),
    ("most", 0.9, 1.0),
)
"""gelu_zeros's bins: "none" is exactly 0; the others are (lo, hi] shares."""


@dataclass(frozen=True)
class Question:
    """One question, JSON-ready through `public()`.

    Attributes:
        id: a short random id (the answers' `question_id`).
        kind: one of `KINDS`.
        prompt: catalog key of the prompt.
        params: the prompt's parameters (d_model, d_ff, T, activation and its label as
            the page shows it, position, ...).
        choices: [{"id", "text" (catalog key), "params", "value"}], in display order; a
            distractor made from a usual slip names it in "why" (kept from the students
            until the reveal).
        state: the page state the question is about (the reveal runs the FFN on it).
    """

    id: str
    kind: str
    prompt: str
    params: dict[str, Any]
    choices: list[dict[str, Any]]
    state: dict[str, Any] = field(repr=False)

    def public(self) -> dict[str, Any]:
        """What every screen receives (the state stays on the server)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "prompt": self.prompt,
            "params": self.params,
            "choices": [{k: v for k, v in c.items() if k != "why"} for c in self.choices],
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, for a store (JSON-serialisable)."""
        return {**self.public(), "choices": self.choices, "state": self.state}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Question:
        """The inverse of `to_dict`."""
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            prompt=str(data["prompt"]),
            params=dict(data["params"]),
            choices=[dict(c) for c in data["choices"]],
            state=dict(data["state"]),
        )


def _choice(index: int, text: str, value: Any, **params: Any) -> dict[str, Any]:
    return {"id": f"c{index}", "text": text, "params": params, "value": value}


def _numbered(values: list[tuple[str, int]], seed: str) -> list[dict[str, Any]]:
    """Distinct numbers as choices in a shuffled (seeded) order; first kept of equal values."""
    seen: dict[int, str] = {}
    for why, value in values:
        seen.setdefault(value, why)
    items = list(seen.items())
    random.Random(seed).shuffle(items)  # noqa: S311 - an order, not a secret
    return [
        {**_choice(i, "session.choice.number", value, n=value), "why": why}
        for i, (value, why) in enumerate(items)
    ]


def _shape_params(state: Mapping[str, Any]) -> dict[str, Any]:
    config = ffn_config(state)
    return {
        "d_model": config.d_model,
        "d_ff": config.d_ff,
        "activation": config.activation,
        "activation_label": get_activation(config.activation).label,  # "ReLU", as the page
        "bias": config.bias,
        "T": token_count(state),
    }


def _rows_changed(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    t = params["T"]
    k = min(int(read(state, "position")), t - 1)
    params["position"] = k
    params["token"] = k  # a position as the page counts them: 0 to T - 1
    params["last"] = t - 1
    options = [
        ("session.choice.rows_none", 0),
        ("session.choice.rows_one", 1),
        ("session.choice.rows_after", t - k),
        ("session.choice.rows_all", t),
    ]
    seen: set[int] = set()
    choices: list[dict[str, Any]] = []
    for text, value in options:
        if value in seen:
            continue
        seen.add(value)
        choices.append(_choice(len(choices), text, value, n=value, token=k))
    return params, choices


def _zero_fraction(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    choices = [
        _choice(i, "session.choice.percent_range", [lo, hi], lo=round(lo * 100), hi=round(hi * 100))
        for i, (lo, hi) in enumerate(FRACTION_BINS)
    ]
    return params, choices


def _parameter_count(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    config = ffn_config(state)
    total = param_counts(config)["total"]
    no_bias = param_counts(ffn_config(state, bias=False))["total"]
    slips = [
        ("right", total),
        ("no_biases", no_bias),
        ("per_token", total * params["T"]),
        ("one_matrix", config.d_model * config.d_ff),
        ("twice", 2 * total),
    ]
    # "counted twice" only fills in when two slips give the same number (no biases, T = 1)
    usual = slips[:4] if len({v for _, v in slips[:4]}) == 4 else slips
    return params, _numbered(usual, qid)


def _params_when_t_doubles(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    total = param_counts(ffn_config(state))["total"]
    params["T2"] = 2 * params["T"]
    params["P"] = total
    options = [
        ("session.choice.same", total),
        ("session.choice.double", 2 * total),
        ("session.choice.quadruple", 4 * total),
        ("session.choice.half", total // 2),
    ]
    return params, [_choice(i, text, v, n=v) for i, (text, v) in enumerate(options)]


SHAPE_CHOICES: tuple[tuple[str, str], ...] = (
    ("input", "x"),
    ("hidden", "h"),
    ("output", "y"),
    ("w1", "W1"),
    ("w2", "W2"),
)
"""shape_of's choices: the answer's `shapes` key and the symbol shown."""


def _shape_of(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    choices = [
        _choice(i, f"session.choice.tensor_{name}", name, symbol=symbol)
        for i, (name, symbol) in enumerate(SHAPE_CHOICES)
    ]
    return params, choices


def _gelu_zeros(state: Mapping[str, Any], qid: str) -> tuple[dict[str, Any], list[Any]]:
    params = _shape_params(state)
    params["count"] = params["T"] * params["d_ff"]
    choices = [
        _choice(i, f"session.choice.gelu_{name}", name, lo=round(lo * 100), hi=round(hi * 100))
        for i, (name, lo, hi) in enumerate(GELU_BINS)
    ]
    return params, choices


BUILDERS: dict[str, Callable[[Mapping[str, Any], str], tuple[dict[str, Any], list[Any]]]] = {
    "rows_changed": _rows_changed,
    "zero_fraction": _zero_fraction,
    "parameter_count": _parameter_count,
    "params_when_t_doubles": _params_when_t_doubles,
    "shape_of": _shape_of,
    "gelu_zeros": _gelu_zeros,
}


def build_question(kind: str, state: Mapping[str, Any], qid: str) -> Question:
    """The question `kind` about the FFN of `state` (the page's URL keys), with id `qid`.

    Raises:
        ValueError: `kind` is not one of `KINDS`, or the state's shape is not an FFN
            (d_model or d_ff below 1, an unknown activation).
    """
    if kind not in BUILDERS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    params, choices = BUILDERS[kind](state, qid)
    return Question(
        id=qid,
        kind=kind,
        prompt=f"session.q.{kind}",
        params=params,
        choices=choices,
        state=dict(state),
    )
