"""A student's phone (390x844, touch, device scale 3): a thumb drags a slider, the page is
recomputed and never scrolls sideways; the window of drawn columns follows the phone's
width; the language switch in the controls changes every line, the status line too.

The layout at every phone and tablet size is measured in tests/browser/test_layout.py.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import wait_rendered
from tests.serverproc import start_server, stop_server

pytestmark = pytest.mark.browser
CJK = re.compile(r"[\u4e00-\u9fff]")
TIMEOUT = 60_000  # ms


def _phone(browser: Any) -> tuple[Any, Any]:
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=3,
        is_mobile=True,
        has_touch=True,
        locale="en-US",
    )
    return context, context.new_page()


def _thumb_drag(page: Any, selector: str, to: float) -> None:
    """Drag range `selector` with a finger (CDP touch events) from its thumb to the fraction
    `to` of its width, in small moves as a thumb does."""
    box = page.locator(selector).bounding_box()
    assert box is not None
    value = page.evaluate(
        "(sel) => { const el = document.querySelector(sel);"
        " return (el.value - el.min) / ((el.max - el.min) || 1); }",
        selector,
    )
    thumb = 14  # px: half the thumb (phone.css: 28 px); its centre runs inside the track
    x0 = box["x"] + thumb + value * (box["width"] - 2 * thumb)
    x1 = box["x"] + thumb + to * (box["width"] - 2 * thumb)
    y = box["y"] + box["height"] / 2
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]})
    for i in range(1, 11):
        x = x0 + (x1 - x0) * i / 10
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
        )
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_a_thumb_drags_a_slider_and_the_page_follows(browser, server_url):  # type: ignore[no-untyped-def]
    context, page = _phone(browser)
    try:
        page.goto(f"{server_url}/?lang=en")
        wait_rendered(page, timeout=TIMEOUT)
        page.locator("#d_ff").scroll_into_view_if_needed()
        before = page.evaluate("() => document.getElementById('d_ff-value').textContent")
        seq = page.evaluate("() => document.body.dataset.forwardSeq")
        _thumb_drag(page, "#d_ff", 0.9)
        page.wait_for_function(
            f"() => document.body.dataset.forwardSeq !== {json.dumps(seq)}", timeout=TIMEOUT
        )
        wait_rendered(page, timeout=TIMEOUT)
        after = page.evaluate("() => document.getElementById('d_ff-value').textContent")
        assert after != before
        # the flow shows the new width, and the page still fits the phone
        caption = page.locator("#shape-hidden").text_content() or ""
        assert after.replace(",", "") in caption.replace(",", "")
        assert page.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
    finally:
        context.close()


def test_the_drawn_window_follows_the_phone_width(browser, server_url):  # type: ignore[no-untyped-def]
    """LLaMA-7B's 11008 units: 96 a window on a phone held upright (each cell at least a
    pixel), 256 once the page is wider (a phone turned, a tablet)."""
    context, page = _phone(browser)
    try:
        page.goto(f"{server_url}/?lang=en&preset=llama-7b")
        wait_rendered(page, timeout=TIMEOUT)
        width = "() => Number(document.getElementById('plot-hidden').dataset.windowStop)"
        assert page.evaluate(width) == 96
        length = page.evaluate(
            "() => document.getElementById('plot-hidden')._fullLayout.xaxis._length"
        )
        assert length >= 96
        page.set_viewport_size({"width": 844, "height": 390})
        page.locator("#plot-hidden").scroll_into_view_if_needed()
        page.wait_for_function(f"() => ({width})() === 256", timeout=TIMEOUT)
    finally:
        context.close()


def test_the_language_switch_changes_the_status_line_too(browser, server_url):  # type: ignore[no-untyped-def]
    context, page = _phone(browser)
    try:
        page.goto(f"{server_url}/?lang=en")
        wait_rendered(page, timeout=TIMEOUT)
        assert not CJK.search(page.locator("#status").text_content() or "")
        switch = page.locator("#lang")
        switch.scroll_into_view_if_needed()
        box = switch.bounding_box()
        assert box is not None and box["height"] >= 44 and box["x"] + box["width"] <= 390
        switch.select_option("zh-CN")
        page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
        page.wait_for_function(
            "() => /[\\u4e00-\\u9fff]/.test(document.getElementById('status').textContent)"
        )
    finally:
        context.close()


def test_the_chinese_tagline_wraps_between_words(browser, server_url):  # type: ignore[no-untyped-def]
    """On a phone the zh-CN tagline takes two lines; the break falls at a space or after
    the comma, never inside a word such as 实时 ("live")."""
    context, page = _phone(browser)
    try:
        page.goto(f"{server_url}/?lang=zh-CN")
        page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
        lines = page.evaluate(
            """() => { const node = document.querySelector('.tagline').firstChild;
              const text = node.textContent;
              const tops = [...text].map((_, i) => { const r = document.createRange();
                r.setStart(node, i); r.setEnd(node, i + 1);
                return Math.round(r.getBoundingClientRect().top); });
              const out = [];
              [...text].forEach((ch, i) => {
                if (i === 0 || tops[i] !== tops[i - 1]) out.push('');
                out[out.length - 1] += ch; });
              return out; }"""
        )
        assert len(lines) >= 2, lines  # the case this checks: the tagline wraps
        for before, after in itertools.pairwise(lines):
            assert before.endswith((" ", "，")) or after.startswith(" "), lines
    finally:
        context.close()


CHART_TIMES = """
window.ffnChartTimes = [];
new MutationObserver((records) => {
  const now = performance.now();
  for (const record of records) {
    for (const node of record.addedNodes) {
      const plot = node.classList?.contains('main-svg') && node.closest('.js-plotly-plot');
      if (plot && !window.ffnChartTimes.some(([id]) => id === plot.id)) {
        window.ffnChartTimes.push([plot.id, now]);
      }
    }
  }
}).observe(document, { subtree: true, childList: true });
"""
FLOW = ["plot-input", "plot-pre_activation", "plot-hidden", "plot-output"]


@pytest.fixture(scope="module")
def modules_server_url() -> Iterator[str]:
    """A server whose page loads the ES modules themselves (FFN_LAB_PAGE_SCRIPT=modules)."""
    proc, base = start_server(env={"FFN_LAB_PAGE_SCRIPT": "modules"})
    yield base
    stop_server(proc)


@pytest.mark.parametrize("page_script", ["bundle", "modules"])
def test_a_phone_fetches_its_script_at_once_and_draws_one_chart_per_task(  # type: ignore[no-untyped-def]
    browser, request, page_script
):
    """The page's script arrives in one go: the bundle (scripts/setup builds it) is the one
    script of its own the page fetches; with the modules, every module it runs is announced
    in its <head> (`modulepreload`: the tree is fetched at once, not level by level behind
    plotly.js). The charts below the fold are drawn without scrolling, the flow in its
    order, each in a task of its own (the page is never blocked for all of them at once)."""
    server = "server_url" if page_script == "bundle" else "modules_server_url"
    base = request.getfixturevalue(server)
    context, page = _phone(browser)
    try:
        page.add_init_script(CHART_TIMES)
        page.goto(f"{base}/?lang=en")
        wait_rendered(page, timeout=TIMEOUT)
        preloaded = set(
            page.evaluate(
                "() => [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href)"
            )
        )
        fetched = set(
            page.evaluate(
                "() => performance.getEntriesByType('resource').map((e) => e.name)"
                ".filter((u) => u.includes('/static/') && u.endsWith('.js'))"
            )
        )
        if page_script == "bundle":
            assert len(fetched) == 1 and re.search(r"/js/main-[0-9a-f]{12}\.js$", fetched.pop())
            assert not preloaded
        else:
            main = next(u for u in fetched if u.endswith("/js/main.js"))
            assert fetched - {main} == preloaded and len(preloaded) > 20
        assert page.evaluate("() => window.scrollY") == 0
        times = dict(page.evaluate("() => window.ffnChartTimes"))
        in_view = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".filter((p) => p.getBoundingClientRect().top < innerHeight).length"
        )
        assert in_view == 0  # all below the fold on a phone held upright
        assert set(FLOW) <= set(times) and "plot-sparsity" in times
        flow = [times[name] for name in FLOW]
        assert flow == sorted(flow) and flow[-1] <= times["plot-sparsity"]
        assert len(set(times.values())) == len(times)  # one chart per task
    finally:
        context.close()


def test_a_chart_out_of_sight_is_dimmed_until_its_new_picture_is_drawn(browser, server_url):  # type: ignore[no-untyped-def]
    """With the hidden heatmap in view, a Tokens step draws the charts in sight; the input
    heatmap above them keeps its picture of the old rows until it scrolls into view, dimmed
    meanwhile, then drawn with the new rows and no longer dimmed."""
    context, page = _phone(browser)
    try:
        page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6", timeout=TIMEOUT)
        wait_rendered(page, timeout=TIMEOUT)
        page.evaluate("() => document.getElementById('plot-hidden').scrollIntoView()")
        page.wait_for_function(
            """() => { const r = document.getElementById('plot-input').getBoundingClientRect();
                 return r.bottom < 0; }"""
        )
        # the page learns that the input left the view from its IntersectionObserver, which
        # reports in the next frames
        page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"
        )
        seq = page.locator("body").get_attribute("data-forward-seq")
        page.evaluate(
            """() => { const s = document.getElementById('tokens'); s.value = '9';
              s.dispatchEvent(new Event('input', { bubbles: true })); }"""
        )
        page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(
            state="attached", timeout=TIMEOUT
        )
        wait_rendered(page, timeout=TIMEOUT)
        rows = "(id) => document.getElementById(id).data[0].z.length"
        assert page.evaluate(rows, "plot-hidden") == 9
        assert page.evaluate(rows, "plot-input") == 6  # not drawn yet: out of sight
        dimmed = "(id) => getComputedStyle(document.getElementById(id)).opacity"
        assert float(page.evaluate(dimmed, "plot-input")) < 0.5
        assert float(page.evaluate(dimmed, "plot-hidden")) == 1
        page.evaluate("() => document.getElementById('plot-input').scrollIntoView()")
        page.wait_for_function(f"() => ({rows})('plot-input') === 9", timeout=TIMEOUT)
        page.wait_for_function(
            "() => !document.getElementById('plot-input').hasAttribute('data-waiting')",
            timeout=TIMEOUT,
        )
        assert float(page.evaluate(dimmed, "plot-input")) == 1
    finally:
        context.close()
