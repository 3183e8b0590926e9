"""A view that has no picture for the new answer shows none, never the previous one's."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 120_000
IDLE = "() => !document.querySelector('section[aria-busy=\"true\"]')"


def test_influence_map_over_the_limit_is_emptied_and_says_why(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=zh-CN&preset=gpt2-small&panel=attention-vs-ffn")
    wait_rendered(page)
    page.locator("#attention-vs-ffn").scroll_into_view_if_needed()
    drawn = "() => (document.getElementById('plot-ffn-influence').data || []).length"
    page.wait_for_function(f"() => ({drawn})() === 1", timeout=TIMEOUT)
    page.select_option("#preset", "llama-7b")  # the [T, T] maps are over the work limit there
    page.wait_for_function(
        "() => document.getElementById('ffn-influence-note').textContent.includes('亿')",
        timeout=TIMEOUT,
    )
    page.wait_for_function(IDLE, timeout=TIMEOUT)
    assert page.evaluate(drawn) == 0  # the GPT-2 map is gone
    note = page.locator("#ffn-influence-note").inner_text()
    assert "FLOPs, over the limit" not in note and "上限" in note  # the page's language
    assert not page.recorder.errors


def test_a_chart_resized_out_of_sight_draws_its_newest_answer(page, server_url):  # type: ignore[no-untyped-def]
    """An answer drawn out of sight waits until its chart scrolls into view; a resize in the
    meantime ("larger text") must not put the previous answer back in its place."""
    page.goto(f"{server_url}/?lesson=1&step=12")  # SwiGLU, the flow in view
    page.locator('#lesson[data-step="swiglu"]').wait_for(timeout=TIMEOUT)
    wait_rendered(page, timeout=TIMEOUT)
    gated = page.evaluate("() => document.getElementById('plot-hidden').layout.title.text")
    seq = page.evaluate("() => document.body.dataset.forwardSeq")
    page.keyboard.press("ArrowRight")  # ReLU again, the flow out of sight: its draw waits
    page.locator('#lesson[data-step="variants"]').wait_for()
    page.wait_for_function(f"() => document.body.dataset.forwardSeq !== '{seq}'", timeout=TIMEOUT)
    page.wait_for_function(IDLE, timeout=TIMEOUT)
    assert page.locator("#activation").input_value() == "relu"
    page.keyboard.press("f")  # larger text: every chart changes size, this one out of sight
    page.locator("body.big").wait_for(state="attached")
    # the resize is seen by the ResizeObserver in a frame and redrawn in the next one
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.locator("#plot-hidden").scroll_into_view_if_needed()
    page.wait_for_function(
        "(t) => { const l = document.getElementById('plot-hidden').layout;"
        " return l && l.title.text !== t && !document.querySelector('#stage-up:not([hidden])'); }",
        arg=gated,
        timeout=30_000,
    )
    z = page.evaluate("() => document.getElementById('plot-hidden').data[0].z.flat()")
    assert min(z) >= 0  # ReLU's hidden layer, not the gated one's signed values
    assert not page.recorder.errors
