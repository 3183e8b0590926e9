"""The page redraws only what changed and what can be seen (charts.js)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser

COUNT = """() => {
  window.ffnDraws = {};
  for (const el of document.querySelectorAll('.js-plotly-plot')) {
    el.on('plotly_afterplot', () => {
      window.ffnDraws[el.id] = (window.ffnDraws[el.id] || 0) + 1;
    });
  }
}"""


def seqs(page) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    body = page.locator("body")
    return body.get_attribute("data-forward-seq") or "", body.get_attribute(
        "data-perturb-seq"
    ) or ""


def test_unchanged_and_offscreen_charts_are_not_redrawn(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    page.wait_for_timeout(200)
    page.evaluate(COUNT)

    # The strength slider changes only the perturbation: the flow (same answer) is not redrawn.
    _, perturb_seq = seqs(page)
    scale = page.locator("#scale")
    scale.focus()
    page.keyboard.press("ArrowRight")
    page.locator(f'body:not([data-perturb-seq="{perturb_seq}"])').wait_for(state="attached")
    page.wait_for_timeout(200)
    draws = page.evaluate("() => window.ffnDraws")
    assert draws.get("plot-hidden", 0) == 0
    assert draws.get("plot-input", 0) == 0

    # The tokens slider changes everything: the visible flow is redrawn at once, the
    # perturbation heatmap below the fold only when it scrolls into view.
    page.evaluate("() => window.scrollTo(0, 0)")
    page.evaluate(COUNT)
    tokens = page.locator("#tokens")
    tokens.focus()
    page.keyboard.press("ArrowLeft")
    page.locator('#plot-hidden[data-rows="5"]').wait_for(state="attached")
    page.locator('#plot-delta[data-rows="5"]').wait_for(state="attached")
    page.wait_for_timeout(300)
    draws = page.evaluate("() => window.ffnDraws")
    assert draws.get("plot-hidden", 0) >= 1
    assert draws.get("plot-delta", 0) == 0
    page.locator("#plot-delta").scroll_into_view_if_needed()
    page.wait_for_function("() => (window.ffnDraws['plot-delta'] || 0) >= 1", timeout=10_000)
    assert page.recorder.errors == []


def test_gated_stage_appears_and_is_drawn(page, server_url):  # type: ignore[no-untyped-def]
    """The `up` stage is hidden for ReLU and drawn as soon as a gated activation shows it."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    assert page.locator("#stage-up").is_hidden()
    page.select_option("#activation", "swiglu")
    page.locator('#plot-up[data-cols="64"]').wait_for(state="attached")
    page.locator("#plot-up .hm, #plot-up image").first.wait_for(timeout=10_000)
    assert page.locator("#stage-up").is_visible()
    assert page.recorder.errors == []
