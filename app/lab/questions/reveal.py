"""The FFN answers a question: run at reveal time on the question's page state.

`rows_changed` nudges token k and compares the outputs row by row
(app.lab.forward.perturb_answer, two separate forward passes); `zero_fraction`, `gelu_zeros`
and `shape_of` read one forward pass (app.lab.forward.forward_answer, every column kept); the
parameter questions count the model's tensors (app.analysis.param_counts, which never
depends on T).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.analysis import param_counts
from app.lab.forward import forward_answer, perturb_answer
from app.lab.limits import Limits
from app.lab.questions.build import Question
from app.lab.questions.setup import ffn_body, ffn_config, read
from app.lab.spec.specs import forward_spec, perturb_spec
from app.services.weight_cache import WeightCache


@dataclass(frozen=True)
class Answer:
    """What the FFN answered.

    Attributes:
        correct: ids of the choices that match the FFN's answer (shape_of may have several
            when two sizes are equal; empty when no choice matches).
        value: the FFN's own number or name (a count, a share in [0, 1], tensor shapes).
        text: catalog key of the sentence that says it; `params` its parameters.
    """

    correct: list[str]
    value: Any
    text: str
    params: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "correct": self.correct,
            "value": self.value,
            "text": self.text,
            "params": self.params,
        }


def _matching(question: Question, value: Any) -> list[str]:
    return [c["id"] for c in question.choices if c["value"] == value]


def _in_bin(question: Question, share: float) -> list[str]:
    for c in question.choices:
        lo, hi = c["value"]
        if lo <= share < hi or (hi == 1.0 and share == 1.0):
            return [c["id"]]
    return []


def _exact_zero_share(hidden: Any) -> tuple[int, int]:
    array = np.asarray(hidden)
    return int(np.count_nonzero(array == 0)), int(array.size)


def _rows_changed(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    state = q.state
    body = ffn_body(state, position=q.params["position"], scale=float(read(state, "scale")))
    result = perturb_answer(perturb_spec(limits, **body), cache, limits)
    changed = [int(i) for i in result["changed_positions"]]
    return Answer(
        _matching(q, len(changed)),
        len(changed),
        "session.answer.rows_changed_one" if len(changed) == 1 else "session.answer.rows_changed",
        {"n": len(changed), "rows": ", ".join(str(i) for i in changed) or "-"},
    )


def _zero_fraction(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    result = forward_answer(forward_spec(limits, **ffn_body(q.state)), cache, limits)
    zeros, size = _exact_zero_share(result["hidden"])
    share = zeros / size
    return Answer(
        _in_bin(q, share),
        share,
        "session.answer.zero_fraction",
        {"zeros": zeros, "size": size, "percent": round(100 * share, 1)},
    )


def _gelu_zeros(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    body = ffn_body(q.state, activation="gelu")
    result = forward_answer(forward_spec(limits, **body), cache, limits)
    zeros, size = _exact_zero_share(result["hidden"])
    share = zeros / size
    name = next(
        n
        for n, lo, hi in (("none", 0, 0), ("few", 0, 0.1), ("half", 0.1, 0.9), ("most", 0.9, 1))
        if (share == 0 if n == "none" else lo < share <= hi)
    )
    return Answer(
        _matching(q, name),
        share,
        "session.answer.gelu_zeros",
        {"zeros": zeros, "size": size, "percent": round(100 * share, 2)},
    )


def _parameter_count(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    counts = param_counts(ffn_config(q.state))
    total = counts["total"]
    parts = " + ".join(f"{name} {n:,}" for name, n in counts.items() if name != "total")
    slips = {c["id"]: c["why"] for c in q.choices if c.get("why")}
    return Answer(
        _matching(q, total),
        total,
        "session.answer.parameter_count",
        {"n": total, "parts": parts, "slips": slips},
    )


def _params_when_t_doubles(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    # param_counts takes the shape only: there is no T to pass, which is the answer
    total = param_counts(ffn_config(q.state))["total"]
    return Answer(
        _matching(q, total),
        total,
        "session.answer.params_when_t_doubles",
        {"n": total, "T": q.params["T"], "T2": q.params["T2"]},
    )


def _shape_of(q: Question, cache: WeightCache, limits: Limits) -> Answer:
    result = forward_answer(forward_spec(limits, **ffn_body(q.state)), cache, limits)
    shapes = result["shapes"]
    wanted = [q.params["T"], q.params["d_ff"]]
    correct = [c["id"] for c in q.choices if shapes.get(c["value"]) == wanted]
    listed = ", ".join(f"{c['params']['symbol']} {list(shapes[c['value']])}" for c in q.choices)
    return Answer(
        correct,
        {c["value"]: shapes[c["value"]] for c in q.choices},
        "session.answer.shape_of",
        {"shapes": listed, "T": wanted[0], "d_ff": wanted[1]},
    )


REVEALERS = {
    "rows_changed": _rows_changed,
    "zero_fraction": _zero_fraction,
    "parameter_count": _parameter_count,
    "params_when_t_doubles": _params_when_t_doubles,
    "shape_of": _shape_of,
    "gelu_zeros": _gelu_zeros,
}


def answer_question(question: Question, cache: WeightCache, limits: Limits) -> Answer:
    """Run the FFN of `question.state` and say which choices it confirms.

    Raises:
        ValueError: the state's FFN is refused by the server's limits (the message names the
            field, as POST /api/forward would).
    """
    return REVEALERS[question.kind](question, cache, limits)
