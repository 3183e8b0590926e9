"""The page with a summarised answer: the window's units as x labels, the caption says so."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def test_big_hidden_layer_shows_the_kept_units(page, server_url):  # type: ignore[no-untyped-def]
    # T 32 x 4096 units: over the display budget, so the server sends a window of
    # 8,192 // 32 = 256 consecutive units (0-255 by default), all drawn at 1920x1080
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{server_url}/?d_model=1024&d_ff=4096&tokens=32")
    wait_rendered(page)
    hidden = page.locator("#plot-hidden")
    assert hidden.get_attribute("data-cols") == "256"
    assert hidden.get_attribute("data-rows") == "32"
    caption = page.locator("#shape-hidden").inner_text()
    assert "[T × d_ff] = [32 × 4096]" in caption
    # it names the window the server sent (consecutive columns), not a selection it did not make
    assert "columns 0–255 of 4096" in caption and "RMS" not in caption
    tooltip = page.locator("#shape-hidden").get_attribute("title") or ""
    assert "columns 0–255 of 4096" in tooltip and "RMS" not in tooltip
    # the x axis names real unit indices of the window
    ticks = [t or "" for t in page.locator("#plot-hidden .xtick text").all_text_contents()]
    assert ticks and all(t.strip().isdigit() for t in ticks)
    assert max(int(t) for t in ticks) <= 255
    # input is 32 x 1024, within the budget: sent whole, drawn as a window of real features
    # (no pooling), the caption saying nothing was left out by the server
    assert int(page.locator("#plot-input").get_attribute("data-cols") or "0") <= 256
    assert "showing" not in page.locator("#shape-input").inner_text()
    # the statistics are the full layer's
    assert "of 4,096 units" in page.locator("#sparsity-summary").inner_text()
    assert page.recorder.errors == []


def test_small_config_is_not_summarised(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    assert page.locator("#plot-hidden").get_attribute("data-cols") == "64"
    assert page.locator("#shape-hidden").inner_text() == "[T × d_ff] = [6 × 64]"
    assert page.recorder.errors == []


@pytest.mark.parametrize(
    ("lang", "words"), [("en", "columns 0–255 of 11008"), ("zh-CN", "第 0–255 列")]
)
def test_captions_speak_the_pages_words_and_keep_api_names_for_the_tooltip(
    page, server_url, lang, words
):  # type: ignore[no-untyped-def]
    """Under "Gate" the caption said "pre_activation ... 0–1023 of 11008 sent": the API's
    words. It now gives the shape in the sliders' terms; the field name is in its tooltip.
    At 1920x1080 the plot has room for the whole window of 256 units."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{server_url}/?lang={lang}&preset=llama-7b&tokens=8")
    wait_rendered(page, timeout=60_000)
    caption = page.locator("#shape-pre_activation").inner_text()
    assert "pre_activation" not in caption and "sent" not in caption and "发送" not in caption
    assert "[T × d_ff] = [8 × 11008]" in caption and words in caption
    tooltip = page.locator("#shape-pre_activation").get_attribute("title") or ""
    assert "pre_activation [8 × 11008]" in tooltip


CAPTION_AND_AXIS = """() => [document.getElementById('shape-hidden').textContent,
  document.getElementById('plot-hidden')._fullLayout.xaxis.title.text]"""


def test_the_caption_names_the_columns_drawn_when_the_server_sent_more(page, server_url):  # type: ignore[no-untyped-def]
    """T 13 x 4096 at 1280x720: the server sends a window wider than the hidden plot can
    draw one column per pixel. The window drawn fits the plot (no more columns than its
    pixels across); the caption, the axis and the range control name those columns, and
    "later" shows the very next ones."""
    page.goto(f"{server_url}/?d_ff=4096&tokens=13")
    wait_rendered(page)
    drawn, room = page.evaluate(
        """() => { const el = document.getElementById('plot-hidden');
             return [el.data[0].z[0].length, el._fullLayout.xaxis._length]; }"""
    )
    assert 16 <= drawn < 256 and drawn <= room, (drawn, room)
    caption, axis = page.evaluate(CAPTION_AND_AXIS)
    assert f"columns 0–{drawn - 1} of 4096" in caption
    assert f"units 0–{drawn - 1} of 4096" in axis
    control = page.locator("#window-units-value").inner_text()
    assert f"units 0–{drawn - 1} of 4096" in control
    # the tooltip still says what the server sent
    assert "the server sent columns 0–" in (
        page.locator("#shape-hidden").get_attribute("title") or ""
    )
    page.locator("#plot-hidden").scroll_into_view_if_needed()
    page.locator("[data-window='units'] [data-step='1']").click()
    page.wait_for_function(
        f"() => document.getElementById('plot-hidden').dataset.windowStart === '{drawn}'"
    )
    caption, axis = page.evaluate(CAPTION_AND_AXIS)
    assert f"columns {drawn}–{2 * drawn - 1} of 4096" in caption
    assert f"units {drawn}–{2 * drawn - 1} of 4096" in axis
    assert page.recorder.errors == []
