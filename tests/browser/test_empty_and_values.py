"""Plots before their first picture say what will appear there; numbers drawn in cells fit.

- The training panel's plots are empty until Train (or the sweep) runs: each says what it
  will show, in the page's language, and offers no PNG/SVG export of nothing.
- A heatmap that prints its values (the tiny preset's block) sizes them to its cells: the
  widest number stays inside its cell (LayerNorm's +0.9999 / -0.9999 ran together).
- An axis title that would wrap drops a trailing gloss without numbers when that makes it
  one line: the zh-CN embed's y title 位置（词元） wrapped after 词 at 640x360.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
HINTED = ["plot-train-loss", "plot-train-accuracy", "plot-train-dead", "plot-train-key",
          "plot-train-value", "plot-train-capacity"]  # fmt: skip

STATE = """(ids) => ids.map((id) => {
  const el = document.getElementById(id);
  return { id, hint: getComputedStyle(el, '::before').content,
           tools: getComputedStyle(el.parentElement.querySelector('.plot-tools')).visibility };
})"""


def test_empty_training_plots_say_what_will_appear(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=train&train_steps=100")
    wait_rendered(page)
    before = page.evaluate(STATE, HINTED)
    for plot in before:
        assert plot["hint"] not in ("none", "normal", '""'), plot  # a sentence is shown
        assert plot["tools"] == "hidden", plot
    assert "Press Train" in before[0]["hint"] and "Run the sweep" in before[-1]["hint"]
    page.locator("#train-start").click()
    page.locator('#train[data-train-state="done"]').wait_for(state="attached", timeout=TIMEOUT)
    page.locator("#train-reading[data-unit]").wait_for(state="attached", timeout=TIMEOUT)
    after = {p["id"]: p for p in page.evaluate(STATE, HINTED)}
    for id_ in HINTED[:-1]:  # drawn: the sentence is gone, the export buttons are back
        assert after[id_]["hint"] in ("none", "normal"), after[id_]
        assert after[id_]["tools"] == "visible", after[id_]
    assert after["plot-train-capacity"]["tools"] == "hidden"  # the sweep has not run
    page.locator("#lang").select_option("zh-CN")
    page.wait_for_function(
        "() => getComputedStyle(document.getElementById('plot-train-capacity'), '::before')"
        ".content.includes('运行扫描')",
        timeout=TIMEOUT,
    )
    assert not page.recorder.errors


def test_numbers_in_cells_fit_their_cells(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?preset=tiny&panel=block")
    wait_rendered(page)
    page.locator("#block").scroll_into_view_if_needed()
    page.locator("#block[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
    plots = page.evaluate(
        """() => [...document.querySelectorAll('#block .plot[id]')].map((el) => {
          const texts = [...el.querySelectorAll('.heatmaplayer text')];
          const cell = el._fullLayout.xaxis._length / Number(el.dataset.cols);
          return { id: el.id, cell, n: texts.length,
                   widest: Math.max(0, ...texts.map((t) => t.getBBox().width)) };
        })"""
    )
    assert len(plots) == 4 and all(p["n"] == 6 for p in plots), plots  # [3 x 2] each
    for plot in plots:
        assert plot["widest"] <= plot["cell"] - 4, plot
    assert not page.recorder.errors


def test_a_title_that_would_wrap_drops_its_gloss(page, server_url):  # type: ignore[no-untyped-def]
    title = "el => el.layout.yaxis.title.text"
    page.goto(f"{server_url}/?lang=zh-CN")
    wait_rendered(page)
    assert page.locator("#plot-input").evaluate(title) == "位置（词元）"  # room for all of it
    page.set_viewport_size({"width": 640, "height": 360})
    page.goto(f"{server_url}/?lang=zh-CN&embed=1")
    wait_rendered(page)
    assert page.locator("#plot-input").evaluate(title) == "位置"  # one line, not 位置（词<br>元）
    assert not page.recorder.errors
