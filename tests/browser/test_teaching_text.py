"""Teaching sentences read on the page, English and Chinese."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser


def _wait(page, panel: str) -> None:  # type: ignore[no-untyped-def]
    """Scroll the panel into view (views out of sight are not computed) and wait for it."""
    page.locator(f"#{panel}").scroll_into_view_if_needed()
    page.locator(f"#{panel}[data-rendered]").wait_for(state="attached", timeout=30_000)


def test_tiny_llama_rule_and_gated_card(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=4&activation=swiglu")
    wait_rendered(page)
    _wait(page, "variants")
    _wait(page, "misconceptions")
    llama = page.locator("#variants-llama")
    assert llama.get_attribute("data-rule") == "llama_tiny"
    text = llama.inner_text()
    assert "42.67" in text  # 2/3 · 64, exact
    assert "→ 256" not in text  # a 16-wide model is not rounded up to 256
    assert text.count("42.67") == 1 and "11,008" in text
    card = page.locator("#myth-collapse")
    assert "bilinear" in card.inner_text() and "collapse" not in card.inner_text()
    assert float(card.get_attribute("data-value") or 0) > 1e-3
    # the shared weights of a gated FFN are three matrices, the gate among them
    assert (
        "One W_gate, one W₁ (up) and one W₂ (down)" in page.locator("#myth-row-by-row").inner_text()
    )

    # the Biases checkbox names the gated layer's three biases, as the gated flow does
    bias_label = page.locator("label:has(#bias)")
    assert bias_label.inner_text().strip() == "Biases b_gate, b_up, b_down"

    page.locator("#lang").select_option("zh-CN")
    page.locator("#myth-collapse:has-text('双线性')").wait_for(timeout=15_000)
    assert "W_gate" in page.locator("#myth-row-by-row").inner_text()
    assert bias_label.inner_text().strip() == "偏置 b_gate、b_up、b_down"
    assert "→ 256" not in page.locator("#variants-llama").inner_text()
    assert page.recorder.errors == []


def test_plain_card_still_collapses_and_wide_rule_rounds(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=512&d_ff=2048&tokens=4")
    wait_rendered(page)
    _wait(page, "variants")
    _wait(page, "misconceptions")
    llama = page.locator("#variants-llama")
    assert llama.get_attribute("data-rule") == "llama"
    assert "1,365.3 → 1,536" in llama.inner_text() or "1,365 → 1,536" in llama.inner_text()
    assert "collapse" in page.locator("#myth-collapse").inner_text()
    row_by_row = page.locator("#myth-row-by-row").inner_text()
    assert "One W₁ and one W₂ serve every position" in row_by_row and "W_gate" not in row_by_row
    assert page.locator("label:has(#bias)").inner_text().strip() == "Biases b₁, b₂"
