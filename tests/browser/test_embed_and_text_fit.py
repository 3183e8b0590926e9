"""Small embeds fit and text fits its plots, checked on the drawn page.

- The tiny preset in a 640x360 embed: its weights row shares the frame with the flow, so
  every heatmap (flow and weights) is drawn at a real size, with its numbers, no arrow lies
  over a plot, and the frame does not scroll (the flow does not shrink to 0 px under the
  weights' fixed heights, its arrows never over the weights' heading).
- zh-CN axis titles: a wrapped title never leaves one character alone on its last line
  ("单元 0–255（共 2048" above "个）"); a short full-width gloss goes to the next line whole.
- A caption never breaks inside a range of numbers ("0–" above "1023", LLaMA-7B, en).
- A 4 x 4 weight matrix prints numbers that fit their cells (W2 had a sixth of the row,
  "+0.3441" in a 32 px cell at the 9 px floor), or none at all, never numbers that run together.
- A colour bar in an 800x450 embed labels its ends only when three labels would overlap.
"""

from __future__ import annotations

import contextlib
from itertools import pairwise
from typing import Any

import pytest

from tests.browser.classroom import wait_answers
from tests.browser.conftest import ARTIFACTS, show, wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 120_000
SHOTS = ARTIFACTS / "trial"

# Every visible plot of the page: its box, whether Plotly drew a heatmap in it, how many
# numbers it printed, the widest of them and the width of a cell as Plotly laid it out.
PLOTS = """() => [...document.querySelectorAll('main > section:not([hidden]) .js-plotly-plot')]
  .filter((el) => el.offsetParent !== null && el.getClientRects().length)
  .map((el) => {
    const r = el.getBoundingClientRect();
    const texts = [...el.querySelectorAll('.heatmaplayer text')].filter((t) => t.textContent);
    const cols = Number(el.dataset.cols), rows = Number(el.dataset.rows);
    const xa = el._fullLayout && el._fullLayout.xaxis, ya = el._fullLayout && el._fullLayout.yaxis;
    return {
      id: el.id, x: r.x, y: r.y, w: r.width, h: r.height, rows, cols,
      drawn: el.querySelectorAll('.heatmaplayer image, .heatmaplayer .hm').length > 0,
      numbers: texts.length,
      widest: Math.max(0, ...texts.map((t) => t.getBBox().width)),
      font: Math.min(99, ...texts.map((t) => parseFloat(getComputedStyle(t).fontSize))),
      cellW: xa ? xa._length / cols : 0, cellH: ya ? ya._length / rows : 0,
    };
  })"""

SCROLL = (
    "() => [document.scrollingElement.scrollHeight, innerHeight,"
    " document.scrollingElement.scrollWidth, innerWidth]"
)


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > 1
        and min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > 1
    )


def _try(wait: Any) -> None:
    """Run a wait; on a timeout go on, so that the assertions say what is wrong."""
    with contextlib.suppress(Exception):  # the checks below report what did not draw
        wait()


def _embed(browser: Any, server_url: str, query: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 640, "height": 360}, locale="en-US")
    page = context.new_page()
    page.goto(f"{server_url}/?lang=en&embed=1&{query}")
    wait_answers(page, TIMEOUT)
    return context, page


def test_tiny_embed_at_640x360_draws_every_heatmap_without_scrolling(browser, server_url):  # type: ignore[no-untyped-def]
    context, page = _embed(browser, server_url, "preset=tiny")
    try:
        page.locator("#flow-weights:not([hidden])").wait_for()
        flow = ["input", "pre_activation", "hidden", "output"]
        weights = ["w1", "b1", "w2", "b2"]
        for name in flow + weights:  # every cell prints its number (hand-sized matrices)
            loc = page.locator(f"#plot-{name} .heatmaplayer text").first
            _try(lambda loc=loc: loc.wait_for(timeout=15_000))
        _try(
            lambda: page.wait_for_function(
                "() => [...document.querySelectorAll('#flow .js-plotly-plot')].every((el) =>"
                " !el._fullLayout || Math.abs(el._fullLayout.height - el.clientHeight) <= 2)",
                timeout=15_000,
            )
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "embed-tiny-640x360.png"))
        size = page.evaluate(SCROLL)
        assert size[0] <= size[1] and size[2] <= size[3], size  # the frame does not scroll
        plots = {p["id"]: p for p in page.evaluate(PLOTS)}
        assert sorted(plots) == sorted(f"plot-{n}" for n in flow + weights)
        for p in plots.values():
            assert p["drawn"], p
            # a real picture inside the frame, its cells big enough to read
            assert p["h"] >= 90 and p["w"] >= 70, p
            assert p["y"] >= 0 and p["y"] + p["h"] <= 361 and p["x"] + p["w"] <= 641, p
            assert p["numbers"] == p["rows"] * p["cols"], p
            assert p["widest"] <= p["cellW"] - 4 and p["font"] >= 9, p
            assert p["cellH"] >= 12, p
        # no two plots overlap, no arrow lies over a plot, the weights' heading is not covered
        boxes = list(plots.values())
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not _overlap(a, b), (a["id"], b["id"])
        others = page.evaluate(
            "() => [...document.querySelectorAll('#flow .arrow, #flow .weights-heading,"
            " #flow figcaption')].filter((e) => e.offsetParent !== null && !e.hidden)"
            ".map((e) => { const r = e.getBoundingClientRect();"
            " return { id: e.id || e.className, x: r.x, y: r.y, w: r.width, h: r.height }; })"
            ".filter((b) => b.w > 1 && b.h > 1)"
        )
        for o in others:
            assert o["y"] + o["h"] <= 361, o
            for p in boxes:
                assert not _overlap(o, p), (o, p["id"])
    finally:
        context.close()


@pytest.mark.parametrize("query", ["", "preset=llama-7b"], ids=["default", "llama-7b"])
def test_other_embeds_at_640x360_still_fit(browser, server_url, query):  # type: ignore[no-untyped-def]
    context, page = _embed(browser, server_url, query)
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('#flow .js-plotly-plot')]"
            ".filter((el) => el.offsetParent !== null).every((el) => el._fullLayout)"
        )
        size = page.evaluate(SCROLL)
        assert size[0] <= size[1] and size[2] <= size[3], size
        assert page.locator("#flow-weights").is_hidden()
        plots = page.evaluate(PLOTS)
        assert len(plots) == (5 if query else 4)
        for p in plots:
            assert p["drawn"] and p["h"] >= 100 and p["y"] + p["h"] <= 361, p
    finally:
        context.close()


# The drawn lines of every title of every visible plot (Plotly's <tspan class="line">).
TITLE_LINES = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter((el) => el.offsetParent !== null)
  .flatMap((el) => [...el.querySelectorAll('.gtitle, .xtitle, .ytitle')].map((t) => ({
    id: el.id, cls: t.getAttribute('class'),
    lines: t.querySelectorAll('tspan.line').length
      ? [...t.querySelectorAll('tspan.line')].map((s) => s.textContent) : [t.textContent] })))"""


@pytest.mark.parametrize("preset", ["transformer-base", "llama-7b"])
def test_zh_titles_leave_no_character_alone_on_a_line(page, server_url, preset):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN&preset={preset}")
    wait_rendered(page, timeout=TIMEOUT)
    show(page, "#plot-histogram", TIMEOUT)
    show(page, "#flow", TIMEOUT)
    # a blank line under a title is room kept level with a wrapped title beside it
    titles = [
        {**t, "lines": [line for line in t["lines"] if line.strip()]}
        for t in page.evaluate(TITLE_LINES)
    ]
    wrapped = [t for t in titles if len(t["lines"]) > 1]
    if preset == "transformer-base":  # its input's window title wraps: the check runs
        assert any(t["id"] == "plot-input" for t in wrapped), titles
    # (LLaMA-7B's fit on one line since an x title may use the room centred under its plot)
    closing = "）】」』，。、；：！？)]"
    for t in wrapped:
        last = "".join(ch for ch in t["lines"][-1] if ch not in closing).strip()
        assert len(last) > 1, t
        # a full-width gloss that fits on a line is not split ("（共 2048" | "个）")
        for line in t["lines"]:
            assert line.count("（") == line.count("）") or len(t["lines"]) > 2, t
    assert not page.recorder.errors


# For every caption of the flow: each range of numbers ("0–1023") in it, and how many
# lines its characters are drawn on (a DOM Range over them, across text nodes and spans).
RANGES = """() => [...document.querySelectorAll('#flow figcaption')]
  .filter((f) => f.offsetParent !== null).flatMap((f) => {
    const nodes = [];
    const walk = document.createTreeWalker(f, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) nodes.push(walk.currentNode);
    const text = nodes.map((n) => n.data).join('');
    const at = (i) => { for (const n of nodes) { if (i <= n.data.length) return [n, i];
      i -= n.data.length; } return [nodes[nodes.length - 1], 0]; };
    return [...text.matchAll(/\\d[\\d,]*–\\d[\\d,]*/g)].map((m) => {
      const range = document.createRange();
      range.setStart(...at(m.index));
      range.setEnd(...at(m.index + m[0].length));
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
        .map((r) => Math.round(r.top)));
      return { id: f.id, range: m[0], lines: tops.size, caption: text };
    });
  })"""


def test_a_caption_never_breaks_inside_a_range(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&preset=llama-7b")
    wait_rendered(page, timeout=TIMEOUT)
    page.locator("#shape-input .caption-more").wait_for()
    ranges = page.evaluate(RANGES)
    assert len(ranges) >= 5, ranges  # "0–1023 of 4096 sent" under each plot of the flow
    wrapped = page.evaluate(
        "() => [...document.querySelectorAll('#flow figcaption')]"
        ".filter((f) => f.getClientRects().length && f.offsetHeight > 30).length"
    )
    assert wrapped >= 1  # some caption wraps at this size: the range must not be split
    for r in ranges:
        assert r["lines"] == 1, r
    assert not page.recorder.errors


def test_numbers_of_a_4x4_weight_matrix_fit_their_cells(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=4&d_ff=4")
    wait_rendered(page, timeout=TIMEOUT)
    show(page, "#flow-weights", TIMEOUT)
    for name in ("w1", "b1", "w2", "b2"):
        loc = page.locator(f"#plot-{name} .heatmaplayer text").first
        _try(lambda loc=loc: loc.wait_for(timeout=15_000))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#flow").screenshot(path=str(SHOTS / "custom-4x4-weights.png"))
    plots = {p["id"]: p for p in page.evaluate(PLOTS)}
    for name in ("w1", "b1", "w2", "b2"):
        p = plots[f"plot-{name}"]
        # every weight printed (the matrices are there to be checked by hand), readable
        assert p["numbers"] == p["rows"] * p["cols"], p
        assert p["font"] >= 9 and p["widest"] <= p["cellW"] - 4, p
    assert plots["plot-w2"]["cols"] == 4 and plots["plot-w2"]["cellW"] >= 40
    # any heatmap that prints numbers prints them inside their cells, or prints none
    for p in plots.values():
        if p["numbers"]:
            assert p["widest"] <= p["cellW"] - 4 and p["font"] >= 9, p
    assert not page.recorder.errors


# Each visible heatmap's colour-bar tick labels: their boxes.
BAR_LABELS = """() => [...document.querySelectorAll('main > section:not([hidden]) .js-plotly-plot')]
  .filter((el) => el.offsetParent !== null)
  .map((el) => ({ id: el.id,
    labels: [...el.querySelectorAll('.colorbar .cbaxis text, .colorbar .ytick text')]
      .map((t) => {
        const r = t.getBoundingClientRect();
        return [t.textContent, r.top, r.bottom];
      }) }))
  .filter((p) => p.labels.length)"""


@pytest.mark.parametrize("query", ["embed=1&lesson=1&step=3", "embed=1&preset=transformer-base"])
def test_colour_bar_labels_of_a_slide_sized_embed_do_not_overlap(  # type: ignore[no-untyped-def]
    page, server_url, query
):
    # an 800x450 frame gives a heatmap a ~45 px colour bar: "+2", "0" and "−2" ran together
    page.set_viewport_size({"width": 800, "height": 450})
    page.goto(f"{server_url}/?{query}")
    wait_answers(page, timeout=TIMEOUT)
    bars = page.evaluate(BAR_LABELS)
    assert bars, "no colour bar drawn"
    for bar in bars:
        spans = sorted((top, bottom, text) for text, top, bottom in bar["labels"])
        for (_, bottom, text), (top, _, below) in pairwise(spans):
            assert bottom <= top + 0.5, (bar["id"], text, below, spans)
    assert page.recorder.errors == []
