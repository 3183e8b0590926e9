"""A step that changes values but not shapes redraws the values only: no Plotly.react, no
new layout; the drawn cells are the new answer's numbers, drawn as Plotly draws them from
scratch, and hover and the SVG export still read them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.conftest import show, wait_rendered
from tests.browser.steps import FLOW, FRESH, SPY, step_seed, step_tokens

pytestmark = pytest.mark.browser


def test_a_new_input_seed_repaints_values_and_keeps_the_axes(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    before = page.evaluate("() => document.getElementById('plot-hidden').data[0].z")
    page.evaluate(SPY)
    page.evaluate(
        "() => { window.ffnBefore = ['input', 'pre_activation', 'hidden', 'output'].map("
        "(k) => document.getElementById(`plot-${k}`).ffnRepaints ?? 0); }"
    )
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as answer:
        step_seed(page, 1)
    sent = answer.value.json()
    page.wait_for_function(
        """() => ['input', 'pre_activation', 'hidden', 'output'].every((k, i) =>
             (document.getElementById(`plot-${k}`).ffnRepaints ?? 0) > window.ffnBefore[i])"""
    )
    # the values only: no react, no new plot, no relayout; the colour bars drawn by Plotly's
    # colour-bar step (the page's plotly.js build), else by a restyle of their ticks only
    calls = page.evaluate("() => window.ffnCalls")
    if page.evaluate("() => Boolean(Plotly.subroutines?.doColorBars)"):
        assert calls == [], calls
    else:
        assert not [c for c in calls if not c.startswith("restyle:")], calls
    pictures = page.evaluate(FRESH, [f"plot-{key}" for key in FLOW])
    for key in FLOW:
        drawn = page.evaluate(f"() => document.getElementById('plot-{key}').data[0].z")
        assert drawn == sent[key], key
        # the axes' nodes are the ones drawn before: not laid out again from scratch
        kept = page.evaluate(
            f"() => document.querySelector('#plot-{key} .xaxislayer-above').ffnKept === true"
        )
        assert kept, key
        # the cells and the colour bar are what Plotly draws from these values from scratch
        assert pictures[f"plot-{key}"]["page"] == pictures[f"plot-{key}"]["fresh"], key
    assert page.evaluate("() => document.getElementById('plot-hidden').data[0].z") != before
    # the SVG export (drawn by Plotly from the figure's data) shows the cells the page shows
    with page.expect_download() as download:
        page.locator('button[data-plot="plot-hidden"][data-format="svg"]').dispatch_event("click")
    svg = Path(download.value.path()).read_text(encoding="utf-8")
    exported = re.findall(r'href="(data:image/png;base64,[^"]+)"', svg)
    assert exported == [pictures["plot-hidden"]["page"]["cells"]]
    # hover reads the new values
    page.evaluate(
        """() => document.getElementById('plot-hidden').on('plotly_hover', (d) => {
             window.ffnHover = { z: d.points[0].z, at: d.points[0].pointNumber }; })"""
    )
    box = page.locator("#plot-hidden .nsewdrag").first.bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("() => window.ffnHover !== undefined")
    hover = page.evaluate("() => window.ffnHover")
    row, col = hover["at"]
    assert hover["z"] == sent["hidden"][row][col]


def _draw_every_view(page, ids: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Scroll each plot that can be seen into view and wait until its view is drawn."""
    for plot in ids:
        if page.locator(f"#{plot}").is_visible():
            show(page, f"#{plot}")


def test_every_chart_a_value_step_repaints_is_drawn_as_plotly_draws_it(page, server_url):  # type: ignore[no-untyped-def]
    """All views, not only the flow: the heatmaps of the perturbation, attention, the stack,
    dropout, the blocks (signed and sequential scales, with and without colour bars), and
    the sparsity bars."""
    page.goto(f"{server_url}/")
    wait_rendered(page)
    ids = page.evaluate("() => [...document.querySelectorAll('.plot[id]')].map((e) => e.id)")
    _draw_every_view(page, ids)
    step_seed(page, 5)
    _draw_every_view(page, ids)
    repainted = page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
             .filter((el) => el.ffnRepaints > 0).map((el) => [el.id, el._fullData[0].type])"""
    )
    assert len([plot for plot, kind in repainted if kind == "heatmap"]) >= 10, repainted
    # the heatmaps, and the bar charts repainted on their fixed axes (the sparsity bars)
    plots = [plot for plot, _ in repainted]
    pictures = page.evaluate(FRESH, plots)
    differ = [plot for plot in plots if pictures[plot]["page"] != pictures[plot]["fresh"]]
    assert differ == []
    assert page.recorder.errors == []


def test_a_new_input_seed_repaints_the_sparsity_bars_on_their_axes(page, server_url):  # type: ignore[no-untyped-def]
    """The sparsity bars' axis is fixed (0 to 1.1) and their tokens stay: a value step gives
    them new lengths and printed values only, drawn as Plotly draws them from scratch, and
    hover reads the new values."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    show(page, "#plot-sparsity")
    page.evaluate(SPY)
    page.evaluate(
        "() => { window.ffnBefore = document.getElementById('plot-sparsity').ffnRepaints ?? 0; }"
    )
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as answer:
        step_seed(page, 7)
    sent = answer.value.json()
    page.wait_for_function(
        "() => (document.getElementById('plot-sparsity').ffnRepaints ?? 0) > window.ffnBefore"
    )
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.endswith(":plot-sparsity")], calls
    drawn = page.evaluate("() => document.getElementById('plot-sparsity').data[0].y")
    assert drawn == sent["sparsity"]["per_token"]
    pictures = page.evaluate(FRESH, ["plot-sparsity"])["plot-sparsity"]
    assert pictures["page"]["bars"] and pictures["page"]["texts"]
    assert pictures["page"] == pictures["fresh"]
    page.evaluate(
        """() => document.getElementById('plot-sparsity').on('plotly_hover', (d) => {
             window.ffnHover = { y: d.points[0].y, at: d.points[0].pointNumber }; })"""
    )
    box = page.locator("#plot-sparsity .barlayer .point path").nth(2).bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2)
    page.wait_for_function("() => window.ffnHover !== undefined")
    hover = page.evaluate("() => window.ffnHover")
    assert hover["y"] == sent["sparsity"]["per_token"][hover["at"]]
    assert page.recorder.errors == []


def test_a_new_input_seed_repaints_the_histogram_on_its_new_axes(page, server_url):  # type: ignore[no-untyped-def]
    """The pre-activation histogram's bins move with the values: a value step gives it new
    counts over new edges, drawn by Plotly's own steps (both axes ranged and drawn again,
    then the bars and the zero line) as Plotly draws them from scratch, and hover reads the
    new counts and edges."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    show(page, "#plot-histogram")
    page.evaluate(SPY)
    page.evaluate(
        """() => { const el = document.getElementById('plot-histogram');
             window.ffnBefore = { repaints: el.ffnRepaints ?? 0,
               range: el._fullLayout.xaxis.range }; }"""
    )
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as answer:
        step_seed(page, 7)
    sent = answer.value.json()["pre_activation_histogram"]
    page.wait_for_function(
        """() => (document.getElementById('plot-histogram').ffnRepaints ?? 0)
             > window.ffnBefore.repaints"""
    )
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.endswith(":plot-histogram")], calls
    drawn = page.evaluate(
        """() => { const el = document.getElementById('plot-histogram');
             return { y: el.data[0].y, edges: el.data[0].customdata,
               range: el._fullLayout.xaxis.range }; }"""
    )
    assert drawn["y"] == sent["counts"]
    assert drawn["edges"] == [
        [a, b] for a, b in zip(sent["edges"], sent["edges"][1:], strict=False)
    ]
    # the bins moved, and the x axis with them
    assert drawn["range"] != page.evaluate("() => window.ffnBefore.range")
    slack = 1e-9 * (sent["edges"][-1] - sent["edges"][0])  # the centres +- half a width
    assert drawn["range"][0] <= sent["edges"][0] + slack
    assert drawn["range"][1] >= sent["edges"][-1] - slack
    pictures = page.evaluate(FRESH, ["plot-histogram"])["plot-histogram"]
    assert pictures["page"]["bars"] and pictures["page"]["shapes"] and pictures["page"]["ticks"]
    assert pictures["page"] == pictures["fresh"]
    page.evaluate(
        """() => document.getElementById('plot-histogram').on('plotly_hover', (d) => {
             window.ffnHover = { y: d.points[0].y, at: d.points[0].pointNumber,
               edges: d.points[0].customdata }; })"""
    )
    tallest = max(range(len(sent["counts"])), key=lambda i: sent["counts"][i])
    box = page.locator("#plot-histogram .barlayer .point path").nth(tallest).bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2)
    page.wait_for_function("() => window.ffnHover !== undefined")
    hover = page.evaluate("() => window.ffnHover")
    assert hover["y"] == sent["counts"][hover["at"]]
    assert hover["edges"] == sent["edges"][hover["at"] : hover["at"] + 2]
    assert page.recorder.errors == []


def test_new_bins_whose_counts_need_wider_labels_get_new_margins_from_plotly(page, server_url):  # type: ignore[no-untyped-def]
    """Tokens 6 -> 64 gives the histogram ten times the values: its counts' labels take a
    third digit, and Plotly's automargin draws the whole figure again from the new bins.
    The picture is the new figure drawn from scratch, drawn once, with one
    plotly_afterplot and no Plotly call from the page."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    show(page, "#plot-histogram")
    page.evaluate(
        """() => { const el = document.getElementById('plot-histogram');
           window.ffnBefore = [el.ffnBinRepaints ?? 0, el._fullLayout._size.l];
           window.ffnAfterplots = 0;
           el.on('plotly_afterplot', () => { window.ffnAfterplots += 1; }); }"""
    )
    page.evaluate(SPY)
    sent = step_tokens(page, 64)["pre_activation_histogram"]
    page.wait_for_function(
        """() => (document.getElementById('plot-histogram').ffnBinRepaints ?? 0)
             > window.ffnBefore[0]"""
    )
    assert page.evaluate("() => window.ffnAfterplots") == 1
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.endswith(":plot-histogram")], calls
    left = page.evaluate("() => document.getElementById('plot-histogram')._fullLayout._size.l")
    assert left > page.evaluate("() => window.ffnBefore[1]")
    assert (
        page.evaluate("() => document.getElementById('plot-histogram').data[0].y") == sent["counts"]
    )
    pictures = page.evaluate(FRESH, ["plot-histogram"])["plot-histogram"]
    assert pictures["page"] == pictures["fresh"]
    assert page.recorder.errors == []
