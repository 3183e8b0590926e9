"""The lesson shows what its step is about, whole and above the card.

Read from the drawn page: the highlighted panel's heading is on screen (its top not
scrolled away) and the bottom of every plot in it lies above the lesson card, with larger
text too (f, ?big=1), at 1280x720 and 1920x1080, in en and zh-CN. The "learn" step runs
the training it describes (curves drawn live), not only a highlighted Train button.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.classroom import wait_answers

pytestmark = pytest.mark.browser
TIMEOUT = 30_000
TRAIN_TIMEOUT = 120_000  # two training streams on two shared cores

PANEL_GEOMETRY = """() => {
  const target = [...document.querySelectorAll('.lesson-highlight')]
    .find((e) => e.closest('main > section'));
  const panel = target.closest('main > section');
  const card = document.getElementById('lesson').getBoundingClientRect();
  const heading = panel.querySelector(':scope > h2').getBoundingClientRect();
  const plots = [...panel.querySelectorAll('.js-plotly-plot')]
    .filter((p) => p.offsetParent !== null)
    .map((p) => ({ id: p.id, bottom: p.getBoundingClientRect().bottom,
      drawn: Math.abs(p._fullLayout.height - p.clientHeight) <= 2 }));
  return { panel: panel.id, headingTop: heading.top, cardTop: card.top, plots };
}"""


def _settled_layout(page: Any) -> None:
    """The highlighted panel's plots were drawn at their (possibly lowered) container size."""
    page.wait_for_function(
        """() => [...document.querySelectorAll(
            'main > section:has(.lesson-highlight) .js-plotly-plot')]
          .filter((p) => p.offsetParent !== null && p._fullLayout)
          .every((p) => Math.abs(p._fullLayout.height - p.clientHeight) <= 2)""",
        timeout=TIMEOUT,
    )


def _assert_whole_above_card(page: Any) -> dict[str, Any]:
    g: dict[str, Any] = page.evaluate(PANEL_GEOMETRY)
    assert g["headingTop"] >= 0, g  # the panel's top is not cut
    assert g["plots"], g
    for plot in g["plots"]:
        assert plot["bottom"] <= g["cardTop"], (plot, g)  # not under the card
    return g


@pytest.mark.parametrize(
    ("step", "big", "size", "lang"),
    [
        (3, False, (1280, 720), "en"),  # the up-projection step: its panel's top was cut
        (4, True, (1280, 720), "en"),  # sparsity with larger text: plots under the card
        (4, True, (1920, 1080), "zh-CN"),
        (3, True, (1920, 1080), "en"),
    ],
)
def test_highlighted_panel_is_whole_above_the_card(  # type: ignore[no-untyped-def]
    page, server_url, step, big, size, lang
):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{server_url}/?lang={lang}&lesson=1&step={step}")
    wait_answers(page)
    if big:
        page.keyboard.press("f")  # as a presenter does: the page re-lays out in place
        page.locator("body[data-lesson-big='true']").wait_for(state="attached", timeout=TIMEOUT)
        wait_answers(page)
    _settled_layout(page)
    _assert_whole_above_card(page)
    assert page.recorder.errors == []


def test_learn_step_runs_the_training(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lesson=1&step=17")
    wait_answers(page)
    # the step starts the run it describes: records stream in and the curves are drawn
    page.locator("#train[data-train-state='done']").wait_for(
        state="attached", timeout=TRAIN_TIMEOUT
    )
    traces = page.evaluate(
        "() => document.getElementById('plot-train-loss').data.map((t) => t.y.length)"
    )
    # with the FFN, without it (a linear map), and the same-budget linear control
    assert len(traces) == 3 and all(n > 1 for n in traces), traces
    card = page.locator("#lesson").bounding_box()
    for plot in ("#plot-train-loss", "#plot-train-accuracy"):
        assert page.locator(f"{plot}.lesson-highlight").count() == 1
        box = page.locator(plot).bounding_box()
        assert box and card and box["y"] >= 0 and box["y"] + box["height"] <= card["y"], plot
    assert page.recorder.errors == []
