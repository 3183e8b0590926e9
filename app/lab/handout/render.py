"""The handout as one HTML document: every lesson step with its picture, numbers, sentence
and the link back to that step on the page; Plotly inlined once; print CSS so Chromium's
"print to PDF" gives one step per block (`chromium --headless --print-to-pdf`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import plotly.io as pio

import app as app_package
from app.lab.figures.parts import FIGURE_WIDTH, PLOT_CONFIG, Messages
from app.lab.handout.picture import Picture
from app.lab.handout.pictures import picture
from app.lab.handout.steps import STEPS, Step
from app.lab.snapshot import templates

LANGUAGES = {"en": "English", "zh-CN": "简体中文"}


def step_link(base_url: str, number: int, lang: str) -> str:
    """The page's address of lesson step `number` (1-based) in `lang`."""
    query = urlencode({"lesson": 1, "step": number, "lang": lang})
    return f"{base_url.split('?')[0].split('#')[0]}?{query}"


def render_handout(
    lang: str,
    base_url: str,
    *,
    steps: tuple[Step, ...] = STEPS,
    on_step: Callable[[int], None] | None = None,
) -> str:
    """The whole handout in `lang` ("en" or "zh-CN").

    Args:
        lang: the language of every sentence, title and label.
        base_url: the page's address (e.g. "https://ffn-lab.example/"), for the links back.
        steps: the lesson's steps (default: all of them).
        on_step: called with the step's number after each picture (a progress hook); with
            it the pictures are computed afresh, without it they are computed once per
            process and language and reused (a second handout takes well under a second).

    Returns:
        One HTML document: Plotly inlined once (in the first figure), one <section> per
        step with data-step = its number and a div.plotly-graph-div per picture.

    Raises:
        ValueError: as `app.lab.handout.pictures.picture`.
    """
    msg = Messages(lang)
    sections: list[dict[str, Any]] = []
    for number, (step, pic, div) in enumerate(_step_pictures(lang, steps, on_step), start=1):
        sections.append(
            {
                "number": number,
                "id": step.id,
                "kind": pic.kind,
                "title": msg(f"lesson.{step.id}.title"),
                "text": _step_text(msg, step.id),
                "numbers": pic.numbers,
                "link": step_link(base_url, number, lang),
                "div": div,
            }
        )
    context = {
        "lang": lang,
        "title": msg("handout.title"),
        "intro": msg("handout.intro", steps=len(steps)),
        "language": msg("handout.language", language=LANGUAGES.get(lang, lang)),
        "link_label": msg("handout.link"),
        "counter": msg("handout.counter"),
        "print_note": msg("handout.print"),
        "swipe_note": msg("handout.swipe"),
        "start": step_link(base_url, 1, lang),
        "made": msg(
            "handout.made",
            version=app_package.__version__,
            when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        ),
        "total": len(steps),
        "sections": sections,
        "figure_width": FIGURE_WIDTH,
    }
    return templates.get_template("handout.html").render(**context)


def _step_text(msg: Messages, step_id: str) -> str:
    """The step's sentence on paper: `handout.step.<id>.text` where the lesson's sentence
    asks for a move on the page (drag, press), else the lesson's own."""
    key = f"handout.step.{step_id}.text"
    return msg(key) if key in msg.messages else msg(f"lesson.{step_id}.text")


def _step_pictures(
    lang: str, steps: tuple[Step, ...], on_step: Callable[[int], None] | None
) -> tuple[tuple[Step, Picture, str], ...]:
    """Each step with its picture and the picture's HTML div. The lesson's own steps are
    computed once per process and language (a step's picture depends only on its settings
    and the language) unless `on_step` asks to watch them being computed."""
    if on_step is None and steps is STEPS:
        return _lesson_pictures(lang)
    return _compute_step_pictures(lang, steps, on_step)


@lru_cache(maxsize=len(LANGUAGES))
def _lesson_pictures(lang: str) -> tuple[tuple[Step, Picture, str], ...]:
    return _compute_step_pictures(lang, STEPS, None)


def _compute_step_pictures(
    lang: str, steps: tuple[Step, ...], on_step: Callable[[int], None] | None
) -> tuple[tuple[Step, Picture, str], ...]:
    out: list[tuple[Step, Picture, str]] = []
    for number, step in enumerate(steps, start=1):
        pic = picture(step, lang)
        div = pio.to_html(
            pic.figure,
            full_html=False,
            include_plotlyjs=number == 1,
            config=PLOT_CONFIG | {"responsive": True, "staticPlot": False},
            div_id=f"handout-plot-{number}",
            default_width="100%",
            default_height=f"{pic.figure.layout.height or 360}px",
            validate=False,
        )
        out.append((step, pic, div))
        if on_step is not None:
            on_step(number)
    return tuple(out)
