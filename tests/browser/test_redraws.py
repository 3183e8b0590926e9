"""The page redraws only what changed and what can be seen (charts.js)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import settled, show, wait_rendered

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


def answer_after(page, script: str) -> None:  # type: ignore[no-untyped-def]
    """Run `script` (a control changed by script), then wait until its forward answer is
    drawn and the page is idle."""
    forward_seq, _ = seqs(page)
    page.evaluate(script)
    page.locator(f'body:not([data-forward-seq="{forward_seq}"])').wait_for(state="attached")
    settled(page)


def test_unchanged_and_offscreen_charts_are_not_redrawn(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    page.evaluate(COUNT)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)

    # The strength slider changes only the perturbation, which is out of sight: nothing is
    # requested (the forward answer is the same) and the flow is not redrawn.
    # (set by script: a key press would scroll the page to the slider, below the fold)
    answer_after(
        page,
        """() => { const s = document.getElementById('scale'); s.stepUp();
          s.dispatchEvent(new Event('input', { bubbles: true })); }""",
    )
    draws = page.evaluate("() => window.ffnDraws")
    assert draws.get("plot-hidden", 0) == 0
    assert draws.get("plot-input", 0) == 0
    assert posts == []
    show(page, "#perturb")  # scrolled into view: fetched and drawn then
    page.locator("#plot-delta .main-svg").first.wait_for()
    assert [u for u in posts if u.endswith("/api/perturb")]

    # The tokens slider changes everything: the visible flow is redrawn at once, the
    # perturbation below the fold is requested and drawn only when it scrolls into view.
    page.evaluate("() => window.scrollTo(0, 0)")
    # the page learns that the perturbation left the view from its IntersectionObserver,
    # which reports in the next frames: wait for two, then step
    page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"
    )
    page.evaluate(COUNT)
    posts.clear()
    tokens = page.locator("#tokens")
    tokens.focus()
    page.keyboard.press("ArrowLeft")
    page.locator('#plot-hidden[data-rows="5"]').wait_for(state="attached")
    settled(page)
    draws = page.evaluate("() => window.ffnDraws")
    assert draws.get("plot-hidden", 0) >= 1
    assert draws.get("plot-delta", 0) == 0
    assert not [u for u in posts if u.endswith("/api/perturb")]
    show(page, "#perturb")
    page.locator('#plot-delta[data-rows="5"]').wait_for(state="attached")
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


WATCH_WRITES = """() => {
  window.ffnWrites = [];
  const inPlot = (n) => (n.nodeType === 1 ? n : n.parentElement)?.closest('.js-plotly-plot');
  new MutationObserver((list) => {
    for (const m of list) {
      if (inPlot(m.target)) continue;
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      const name = el.id || el.getAttribute('class') || el.tagName;
      window.ffnWrites.push([m.type, m.attributeName || '', name]);
    }
  }).observe(document.body,
    { subtree: true, childList: true, attributes: true, characterData: true });
}"""


def test_a_value_step_rewrites_no_words_that_stay_the_same(page, server_url):  # type: ignore[no-untyped-def]
    """A new input seed changes the numbers, not the words: the sliders' values, the ratio,
    the captions, the readout and the export buttons keep their text nodes and attributes
    (each rewrite made the browser lay them out again in a drag's every frame)."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    settled(page)
    page.evaluate(WATCH_WRITES)
    answer_after(
        page,
        """() => { const s = document.getElementById('input_seed'); s.value = '7';
          s.dispatchEvent(new Event('change', { bubbles: true })); }""",
    )
    writes = page.evaluate("() => window.ffnWrites")
    same = {"d_model", "d_ff", "tokens", "d_model-value", "d_ff-value", "tokens-value", "ratio"}
    same |= {"readout-shapes", "readout-params", "readout-matrices", "position"}
    same |= {f"shape-{key}" for key in ("input", "pre_activation", "hidden", "output")}
    rewritten = [w for w in writes if w[2] in same or w[2] == "small"]
    assert rewritten == [], rewritten
    # the numbers did change: the new answer was drawn
    assert page.locator("#plot-hidden").evaluate("el => el.data[0].z.length") == 6
