"""The page in a real browser: sliders drive a real FFN, perturbation reads exact zeros."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.classroom import DOCS
from tests.browser.conftest import ARTIFACTS, layout_stable, settled, wait_rendered

pytestmark = pytest.mark.browser


def test_d_ff_slider_changes_hidden_width_and_perturbation_is_exact(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    hidden = page.locator("#plot-hidden")
    assert hidden.get_attribute("data-cols") == "64"
    assert hidden.get_attribute("data-rows") == "6"

    slider = page.locator("#d_ff")
    values = json.loads(slider.get_attribute("data-values") or "[]")
    start = int(slider.input_value())
    slider.focus()
    page.keyboard.press("ArrowRight")
    expected = values[start + 1]
    page.locator(f'#plot-hidden[data-cols="{expected}"]').wait_for(timeout=15_000)
    assert page.locator("#d_ff-value").inner_text() == str(expected)
    assert f"d_ff={expected}" in page.url

    # Nudge token 2: only its own output row moves, the others read exactly 0.
    position = page.locator("#position")
    position.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.locator('#delta-norms li[data-position="2"]').wait_for()
    page.locator("#perturb-max-other[data-value='0']").wait_for(timeout=15_000)
    items = page.locator("#delta-norms li")
    expect(items).to_have_count(6)
    settled(page)
    norms = {
        int(items.nth(i).get_attribute("data-position") or -1): float(
            items.nth(i).get_attribute("data-value") or "nan"
        )
        for i in range(items.count())
    }
    assert len(norms) == 6
    assert norms[2] > 0
    assert all(norms[i] == 0.0 for i in norms if i != 2)
    assert "position 1: 0" in items.nth(1).inner_text()

    # Before/after share one colour scale, fixed by the larger of the two outputs.
    before = page.locator("#plot-output-before")
    assert before.get_attribute("data-zmax") == page.locator("#plot-output-after").get_attribute(
        "data-zmax"
    )
    assert float(before.get_attribute("data-zmax") or 0) > 0

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page.png"), full_page=False)
    assert page.recorder.foreign() == []
    assert page.recorder.errors == []


def test_readme_screenshot(page, server_url):  # type: ignore[no-untyped-def]
    """Makes screenshot.png, the picture in README, from the real page (see DOCS)."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6&position=2&scale=2")
    wait_rendered(page)
    layout_stable(page)
    DOCS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS / "screenshot.png"), full_page=True)
    assert (DOCS / "screenshot.png").stat().st_size > 10_000
    assert page.recorder.errors == []
