"""The sticky controls never run below the window (at 1280x720 the sidebar is 842 px tall,
913 px in zh-CN: unscrolled, Language and the status line could only be reached at the end
of a ~9,000 px page). It scrolls on its own; the lesson scrolls it to a control it
highlights.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box, selector
    return box


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_every_control_can_be_reached_anywhere_on_the_page(browser, server_url, lang):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{server_url}/?lang={lang}")
        wait_rendered(page)
        page.evaluate("() => window.scrollTo(0, 3000)")
        page.wait_for_function("() => window.scrollY > 2900")
        bar = _box(page, ".controls")
        assert bar["y"] >= 0 and bar["y"] + bar["height"] <= 720 + 1, bar
        for selector in ("#lang", "#status"):
            page.locator(selector).scroll_into_view_if_needed()
            box = _box(page, selector)
            assert box["y"] >= 0 and box["y"] + box["height"] <= 720 + 1, (selector, box)
        # the sidebar scrolled on its own; the page stayed where it was, far from its end
        assert page.evaluate("() => document.querySelector('.controls').scrollTop") > 0
        end = page.evaluate("() => document.documentElement.scrollHeight - window.innerHeight")
        assert page.evaluate("() => window.scrollY") < min(3200, end - 1000), end
    finally:
        context.close()


def test_the_lesson_scrolls_the_sidebar_to_the_control_it_highlights(browser, server_url):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    page = context.new_page()
    try:
        # step 9 (dropout) highlights the Mode control, low in the sidebar
        page.goto(f"{server_url}/?lang=en&lesson=1&step=9")
        wait_rendered(page)
        page.locator("[data-control='mode'].lesson-highlight").wait_for(state="attached")
        mode = _box(page, "[data-control='mode']")
        card = _box(page, "#lesson")
        assert mode["y"] >= 0 and mode["y"] + mode["height"] <= card["y"] + 1, (mode, card)
    finally:
        context.close()
