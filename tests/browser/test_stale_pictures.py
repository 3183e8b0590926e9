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
