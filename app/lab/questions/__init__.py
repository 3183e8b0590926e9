"""Predict-then-reveal questions about the FFN a class session shows (no HTTP, no storage).

A lecturer asks one of `KINDS` about the FFN as it stands in the session's page state (the
URL's keys: d_model, d_ff, activation, bias, tokens, seed, input_seed, position, scale,
preset); students pick a choice; at the reveal the real FFN answers:

    q = build_question("parameter_count", state)       # prompt + choices, JSON-ready
    a = answer_question(q, cache, limits)               # runs app.lab.forward / app.analysis

Choices and prompts are catalog keys with parameters (static/i18n/<lang>/session.json), so
every screen shows them in its own language.
"""

from __future__ import annotations

from app.lab.questions.build import KINDS, Question, build_question
from app.lab.questions.reveal import Answer, answer_question
from app.lab.questions.setup import ffn_body

__all__ = ["KINDS", "Answer", "Question", "answer_question", "build_question", "ffn_body"]
