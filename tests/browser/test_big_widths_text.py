"""Text at the biggest widths and a long T is whole (at 4096 x 16384, T 64, 1280x720, no
"features 0–127 o…" under the input, "output [64 × 4096] ·…" under the output), and the block
panel's captions never break inside a shape ("Residual input x [6 ×" above "16]").
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import show, wait_rendered

pytestmark = pytest.mark.browser

# Flow x titles Plotly drew that fit.js shortened, and flow captions cut by their line clamp.
CUT = """() => {
  const out = [];
  for (const el of document.querySelectorAll('#flow .js-plotly-plot .xtitle')) {
    if (el.textContent.trim().endsWith('\\u2026')) out.push(['title', el.textContent.trim()]);
  }
  for (const el of document.querySelectorAll('#flow figcaption')) {
    if (el.offsetParent !== null && el.scrollHeight > el.clientHeight + 2) {
      out.push(['caption', el.textContent.trim()]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_titles_and_captions_are_whole_at_the_biggest_widths(page, server_url, lang):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang={lang}&d_model=4096&d_ff=16384&tokens=64")
    wait_rendered(page, timeout=120_000)
    page.locator("#plot-output .xtitle").wait_for(state="attached")
    assert page.evaluate(CUT) == []


def test_block_captions_keep_their_shape_on_one_line(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&panel=block")
    wait_rendered(page)
    show(page, "#block")
    text = page.locator("#shape-block-0").inner_text()
    assert text.endswith("[6\u00a0×\u00a016]"), repr(text)
