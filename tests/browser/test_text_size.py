"""Text size on the page and in the charts, when "larger text" is switched or the window
changes size: the same as on a page opened that way.

The chart fonts scale with the root font (app.css: `html { font-size: clamp(...) }`, larger
under "larger text"), which the charts read once per viewport size and text mode
(static/js/charts/common.js `rootScale`). A page switched to larger text, or resized, must
draw its charts exactly as a page opened at that size or mode does.
"""

from __future__ import annotations

from tests.browser.conftest import wait_rendered

FONTS = """() => ({
  root: parseFloat(getComputedStyle(document.documentElement).fontSize),
  chart: document.getElementById('plot-hidden')._fullLayout.font.size,
})"""

TIMEOUT = 60_000


def _fonts_on_opening(page, url: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    page.goto(url)
    wait_rendered(page, timeout=TIMEOUT)
    return dict(page.evaluate(FONTS))


def _fonts_of_fresh_page(browser, url: str, size: tuple[int, int]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-US")
    try:
        return _fonts_on_opening(context.new_page(), url)
    finally:
        context.close()


def _wait_chart_font(page, size: float) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        "(s) => document.getElementById('plot-hidden')._fullLayout?.font?.size === s",
        arg=size,
        timeout=TIMEOUT,
    )


def test_larger_text_switched_on_draws_like_a_page_opened_with_it(page, browser, server_url):  # type: ignore[no-untyped-def]
    big = _fonts_of_fresh_page(browser, f"{server_url}/?lesson=1&step=1&big=1", (1280, 720))
    normal = _fonts_on_opening(page, f"{server_url}/?lesson=1&step=1")
    assert big["root"] > normal["root"] and big["chart"] > normal["chart"]
    page.locator("#lesson-big").click()
    page.locator("html.big body.big").wait_for(state="attached")
    _wait_chart_font(page, big["chart"])  # a stale root size would draw smaller text
    assert page.evaluate(FONTS) == big
    page.locator("#lesson-big").click()
    page.locator("html:not(.big) body:not(.big)").wait_for(state="attached")
    _wait_chart_font(page, normal["chart"])
    assert page.evaluate(FONTS) == normal
    assert page.recorder.errors == []


def test_a_resized_window_draws_like_a_page_opened_at_that_size(page, browser, server_url):  # type: ignore[no-untyped-def]
    wide = _fonts_of_fresh_page(browser, f"{server_url}/", (1920, 1080))
    small = _fonts_on_opening(page, f"{server_url}/")
    assert wide["root"] > small["root"] and wide["chart"] > small["chart"]
    page.set_viewport_size({"width": 1920, "height": 1080})
    _wait_chart_font(page, wide["chart"])
    assert page.evaluate(FONTS) == wide
    assert page.recorder.errors == []
