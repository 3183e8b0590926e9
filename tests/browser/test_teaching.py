"""The teaching panels in a real browser: each shows computed numbers that we check here."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import ARTIFACTS, show, wait_rendered

pytestmark = pytest.mark.browser
PANELS = ("attention-vs-ffn", "block", "variants", "budget", "dropout", "misconceptions")
URL = "/?d_model=16&d_ff=64&tokens=6&position=2&scale=1"


def value(page, selector: str) -> float:  # type: ignore[no-untyped-def]
    return float(page.locator(selector).get_attribute("data-value") or "nan")


def wait_panel(page, panel: str, rendered: int = 1) -> None:  # type: ignore[no-untyped-def]
    """Scroll the panel into view (only views in sight are computed) and wait for its answer."""
    page.locator(f"#{panel}").scroll_into_view_if_needed()
    page.locator(f"#{panel}[data-rendered='{rendered}']").wait_for(state="attached", timeout=30_000)


def test_every_teaching_panel_shows_computed_numbers(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}{URL}")
    wait_rendered(page)
    for panel in PANELS:
        wait_panel(page, panel)

    # 1. Attention moves every row (nonzero norms == T), the FFN only one.
    assert value(page, "#attention-moved") == 6
    assert value(page, "#ffn-moved") == 1
    assert value(page, "#ffn-influence-note") == 0  # no off-diagonal influence
    assert page.locator("#plot-attention-weights").get_attribute("data-rows") == "6"
    assert page.locator("#plot-attention-weights").get_attribute("data-cols") == "6"

    # 2. Post-norm rows have mean ~ 0; the flow shows four steps ending in LayerNorm.
    assert abs(value(page, "#block-stats")) < 1e-4
    assert page.locator("#plot-block-3").get_attribute("data-step") == "output"
    assert "64 × 16" in page.locator("#block-why").inner_text()

    # 3. Variants: six rows, the same W1, LLaMA's 11008, gated rows have 3 matrices.
    rows = page.locator("#variants-table tbody tr")
    assert rows.count() == 6
    assert value(page, "#variants-shared") == 0
    assert value(page, "#variants-llama") == 11008
    swiglu = page.locator('#variants-table tr[data-variant="swiglu"] td')
    assert float(swiglu.nth(1).get_attribute("data-value") or 0) == 3
    assert float(swiglu.nth(3).get_attribute("data-value") or 0) == 3 * 16 * 64 + 2 * 64 + 16
    relu_exact = float(
        page.locator('#variants-table tr[data-variant="relu"] td')
        .nth(4)
        .get_attribute("data-value")
        or "nan"
    )
    forward = httpx.post(
        f"{server_url}/api/forward", json={"d_model": 16, "d_ff": 64, "num_tokens": 6}
    ).json()
    pre = [v for row in forward["pre_activation"] for v in row]
    assert relu_exact == pytest.approx(sum(v <= 0 for v in pre) / len(pre), abs=1e-6)

    # 4. Budget: counts by formula; FFN params flat over T; Conv1d equals the FFN.
    assert value(page, "#budget-ffn-params") == 2 * 16 * 64 + 64 + 16
    assert value(page, "#budget-attn-params") == 4 * 16 * 16 + 4 * 16
    assert value(page, "#budget-growth") == 0
    page.locator("#conv-diff[data-value]").wait_for(state="attached")
    assert 0 <= value(page, "#conv-diff") < 1e-5

    # 6. Misconceptions.
    assert value(page, "#myth-layers") == 2
    assert value(page, "#myth-additivity") > 1e-3
    assert value(page, "#myth-mixing-result") == 0
    assert page.locator("#myth-mixing-result").get_attribute("data-changed") == "1"
    params = page.locator("#myth-tokens-table tbody tr td:nth-child(2)")
    assert {params.nth(i).get_attribute("data-value") for i in range(params.count())} == {"2128"}

    # 5. Dropout: the page opens in eval mode, so the panel shows eval only (the identity);
    # the sidebar's Mode drives it (one truth): train scales by 1/(1-p) exactly.
    assert page.locator("#dropout").get_attribute("data-mode") == "eval"
    assert value(page, "#dropout-eval") == 0
    assert page.locator("#dropout-fraction").is_hidden()
    page.locator("#mode").select_option("train")
    wait_panel(page, "dropout", 2)
    assert page.locator("#dropout").get_attribute("data-mode") == "train"
    assert page.locator('input[name="dropout-mode"][value="train"]').is_checked()
    assert value(page, "#dropout-scaling") == 0
    assert value(page, "#dropout-eval") == 0
    assert value(page, "#dropout-seed-diff") > 0
    assert 0.05 < value(page, "#dropout-fraction") < 0.4

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "teaching.png"), full_page=True)
    assert page.recorder.foreign() == []
    assert page.recorder.errors == []


def test_panel_controls_recompute(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}{URL}")
    wait_rendered(page)
    for panel in PANELS:
        wait_panel(page, panel)

    # Pre-norm: the flow starts with LayerNorm(x) and the output is not normalised.
    page.locator('input[name="block-norm"][value="pre"]').check()
    wait_panel(page, "block", 2)
    assert page.locator("#plot-block-1").get_attribute("data-step") == "ffn_input"
    assert float(page.locator("#block-stats").get_attribute("data-std-max") or 0) > 1.01

    # Match params: gated d_ff becomes 42 and the counts meet.
    page.locator("#variants-match").check()
    wait_panel(page, "variants", 2)
    cells = page.locator('#variants-table tr[data-variant="swiglu"] td')
    assert cells.nth(2).get_attribute("data-value") == "42"
    assert cells.nth(3).get_attribute("data-value") == str(3 * 16 * 42 + 2 * 42 + 16)

    # The panel's mode is the sidebar's Mode (one truth): train there sets it here, and back.
    page.locator('input[name="dropout-mode"][value="train"]').check()
    wait_panel(page, "dropout", 2)
    assert page.locator("#mode").input_value() == "train"
    assert page.locator("#dropout").get_attribute("data-mode") == "train"
    assert page.locator("#dropout-fraction").is_visible()
    page.locator('input[name="dropout-mode"][value="eval"]').check()
    wait_panel(page, "dropout", 3)
    assert page.locator("#mode").input_value() == "eval"
    assert page.locator("#dropout").get_attribute("data-mode") == "eval"
    assert value(page, "#dropout-main") == 0
    # In eval mode no training figures are listed.
    for item in ("#dropout-fraction", "#dropout-scaling", "#dropout-seed-diff"):
        assert page.locator(item).is_hidden()
    assert page.locator("#plot-dropout-mask").is_hidden()

    # Two heads: attention still moves every row.
    page.locator("#attention-heads").select_option("2")
    wait_panel(page, "attention-vs-ffn", 2)
    assert value(page, "#attention-moved") == 6

    # The main controls drive the panels too: 8 tokens -> 8 rows moved by attention.
    page.locator("#attention-vs-ffn").scroll_into_view_if_needed()
    tokens = page.locator("#tokens")
    tokens.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.locator("#attention-moved[data-value='8']").wait_for(state="attached", timeout=30_000)
    page.locator("#ffn-moved[data-value='1']").wait_for(state="attached", timeout=30_000)

    # Chinese catalogs cover the panels.
    page.locator("#lang").select_option("zh-CN")
    page.locator("#attention-heading:has-text('注意力')").wait_for(timeout=15_000)
    assert "注意力" in page.locator("#attention-moved").inner_text()
    assert page.recorder.errors == []


def test_budget_formula_names_biases_only_when_the_layer_has_them(page, server_url):  # type: ignore[no-untyped-def]
    # with biases off the counts never say "biases 0" beside "2 · 16 · 64 (+ 64 + 16)"
    page.goto(f"{server_url}/?lang=en&bias=0&panel=budget")
    wait_rendered(page)
    show(page, "#budget")
    page.locator("#budget-ffn-params[data-value]").wait_for(state="attached")
    assert value(page, "#budget-ffn-params") == 2 * 16 * 64
    assert page.locator("#budget-ffn-formula").inner_text() == "2 · 16 · 64"
    assert page.locator("#budget-attn-formula").inner_text() == "4 · 16²"
