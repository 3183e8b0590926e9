"""A step that changes values but not shapes redraws the values only: no Plotly.react, no
new layout; the drawn cells are the new answer's numbers, drawn as Plotly draws them from
scratch, and hover and the SVG export still read them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.conftest import show, wait_rendered

pytestmark = pytest.mark.browser

SPY = """() => {
  window.ffnCalls = [];
  for (const name of ['react', 'newPlot', 'relayout', 'restyle']) {
    const f = Plotly[name];
    Plotly[name] = function (el, ...rest) {
      window.ffnCalls.push(`${name}:${el.id}`);
      return f.call(this, el, ...rest);
    };
  }
  for (const el of document.querySelectorAll('.flow .js-plotly-plot')) {
    el.querySelector('.xaxislayer-above').ffnKept = true;
  }
}"""

FLOW = ["input", "pre_activation", "hidden", "output"]


def _step_seed(page, value: int) -> None:  # type: ignore[no-untyped-def]
    seq = page.locator("body").get_attribute("data-forward-seq")
    page.locator("#input_seed").fill(str(value))
    page.locator("#input_seed").dispatch_event("change")
    page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(state="attached")
    wait_rendered(page)


# Runs in the page: each chart drawn again from scratch by Plotly (newPlot of its data and
# layout in a container of its size): a heatmap's cells and colour-bar labels, a bar chart's
# bar outlines and printed values, and the tick labels.
FRESH = """async (ids) => {
  const out = {};
  const picture = (g) => {
    const image = g.querySelector('.hm image');
    return { cells: image && (image.getAttribute('href') || image.getAttribute('xlink:href')),
      box: image && ['x', 'y', 'width', 'height'].map((a) => image.getAttribute(a)),
      bar: [...g.querySelectorAll('.colorbar text')].map((t) => t.textContent),
      bars: [...g.querySelectorAll('.barlayer .point path')].map((p) => p.getAttribute('d')),
      shapes: [...g.querySelectorAll('.shapelayer path')].map((p) => p.getAttribute('d')),
      texts: [...g.querySelectorAll('.barlayer .point text')].map((t) =>
        [t.textContent, t.getAttribute('transform'), t.getAttribute('x'), t.getAttribute('y')]),
      // each tick label with its place (the order of the nodes is not part of the picture)
      ticks: [...g.querySelectorAll('.xtick text, .ytick text')].map((t) => [t.textContent,
        ...['transform', 'x', 'y'].map((a) => t.getAttribute(a))].join(' ')).sort() };
  };
  for (const id of ids) {
    const el = document.getElementById(id);
    const host = document.createElement('div');
    host.style.cssText = 'position:absolute;left:0;top:0';
    host.style.width = `${el.clientWidth}px`;
    host.style.height = `${el.clientHeight}px`;
    document.body.appendChild(host);
    await Plotly.newPlot(host, JSON.parse(JSON.stringify(el.data)),
      JSON.parse(JSON.stringify(el.layout)), { displayModeBar: false });
    out[id] = { page: picture(el), fresh: picture(host) };
    Plotly.purge(host);
    host.remove();
  }
  return out;
}"""


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
        _step_seed(page, 1)
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


def _step_tokens(page, value: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Move the Tokens slider to `value`; returns the forward answer drawn."""
    seq = page.locator("body").get_attribute("data-forward-seq")
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as answer:
        page.evaluate(
            """(v) => { const s = document.getElementById('tokens'); s.value = String(v);
              s.dispatchEvent(new Event('input', { bubbles: true })); }""",
            value,
        )
    page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(state="attached")
    wait_rendered(page)
    return answer.value.json()  # type: ignore[no-any-return]


# Runs in the page: each plot's place in its figure (Plotly's margins and plot area, px).
PLACES = """(ks) => ks.map((k) => {
  const { l, r, t, b, w, h } = document.getElementById(`plot-${k}`)._fullLayout._size;
  return [l, r, t, b, w, h];
})"""


@pytest.mark.parametrize("tokens", [5, 8, 12])
def test_new_rows_are_drawn_as_plotly_draws_them(page, server_url, tokens):  # type: ignore[no-untyped-def]
    """Tokens 6 -> 5 (fewer rows), 6 -> 8 (more) and 6 -> 12 (two-digit row numbers, in the
    room the plots keep for them): new values, row names and y ticks drawn by Plotly's own
    steps for the y axis, the colour bar and the cells (no Plotly.react); the picture, the
    row names and hover are those of the new figure drawn from scratch, and each plot keeps
    its place and margins (it does not move sideways as its rows change)."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    places = page.evaluate(PLACES, FLOW)
    page.evaluate(SPY)
    page.evaluate(
        """(ks) => { window.ffnBefore = ks.map((k) =>
             document.getElementById(`plot-${k}`).ffnRowRepaints ?? 0);
           window.ffnAfterplots = {};
           for (const k of ks) document.getElementById(`plot-${k}`).on('plotly_afterplot',
             () => { window.ffnAfterplots[k] = (window.ffnAfterplots[k] ?? 0) + 1; }); }""",
        FLOW,
    )
    sent = _step_tokens(page, tokens)
    page.wait_for_function(
        """(ks) => ks.every((k, i) =>
             (document.getElementById(`plot-${k}`).ffnRowRepaints ?? 0) > window.ffnBefore[i])""",
        arg=FLOW,
    )
    # each drawing ends with plotly_afterplot, as Plotly's own calls do (the page's
    # benchmarks and the tests wait for it), also when its automargin drew the figure again
    assert page.evaluate("() => window.ffnAfterplots") == {key: 1 for key in FLOW}
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.split(":")[1] in {f"plot-{k}" for k in FLOW}], calls
    pictures = page.evaluate(FRESH, [f"plot-{key}" for key in FLOW])
    for key in FLOW:
        drawn = page.evaluate(f"() => document.getElementById('plot-{key}').data[0].z")
        assert drawn == sent[key], key
        assert len(drawn) == tokens, key
        # the cells, the colour bar and every tick label (the row names) as drawn from scratch
        assert pictures[f"plot-{key}"]["page"] == pictures[f"plot-{key}"]["fresh"], key
        # the x axis's nodes are the ones drawn before: only the y axis was drawn again
        kept = page.evaluate(
            f"() => document.querySelector('#plot-{key} .xaxislayer-above').ffnKept === true"
        )
        assert kept, key
    assert page.evaluate(PLACES, FLOW) == places
    # hover names the new row and reads its value, in the last row too
    page.evaluate(
        """() => document.getElementById('plot-hidden').on('plotly_hover', (d) => {
             const p = d.points[0];
             window.ffnHover = { z: p.z, at: p.pointNumber, y: p.y }; })"""
    )
    box = page.locator("#plot-hidden .nsewdrag").first.bounding_box()
    assert box
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * (1 - 0.5 / tokens))
    page.wait_for_function("() => window.ffnHover !== undefined")
    hover = page.evaluate("() => window.ffnHover")
    row, col = hover["at"]
    assert row == tokens - 1
    assert hover["z"] == sent["hidden"][row][col]
    # rows named by their tokens, or by their index
    names = page.evaluate("() => document.getElementById('plot-hidden').data[0].y")
    assert hover["y"] == (names[row] if names else row)
    assert page.recorder.errors == []


def test_numbered_rows_keep_their_margins_through_the_steps_after(page, server_url):  # type: ignore[no-untyped-def]
    """A Tokens step draws numbered rows without measuring their labels (repaint.js
    drawRowNumbers: their room is fixed), and the margin Plotly pushed for them stays. The
    value steps after it redraw the colour bars, and Plotly then computes the margins again:
    every plot keeps its place, is never drawn whole again (no `plotly_beforeplot`: a margin
    that lost its push gets it back by a whole redraw) and is drawn as Plotly draws its
    figure from scratch."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    places = page.evaluate(PLACES, FLOW)
    page.evaluate(SPY)
    page.evaluate(
        """(ks) => { window.ffnWhole = {};
           for (const k of ks) document.getElementById(`plot-${k}`).on('plotly_beforeplot',
             () => { window.ffnWhole[k] = (window.ffnWhole[k] ?? 0) + 1; }); }""",
        FLOW,
    )
    _step_tokens(page, 8)
    for seed in (1, 2):
        _step_seed(page, seed)
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.split(":")[1] in {f"plot-{k}" for k in FLOW}], calls
    assert page.evaluate("() => window.ffnWhole") == {}
    assert page.evaluate(PLACES, FLOW) == places
    pictures = page.evaluate(FRESH, [f"plot-{key}" for key in FLOW])
    for key in FLOW:
        assert pictures[f"plot-{key}"]["page"] == pictures[f"plot-{key}"]["fresh"], key
    assert page.recorder.errors == []


def test_new_rows_with_wider_names_get_new_margins_from_plotly(page, server_url):  # type: ignore[no-untyped-def]
    """A heatmap whose row names grow wider with its rows (the dropout panel's, named 0 to
    T-1): Tokens 6 -> 12 gives its y labels new margins, and Plotly's automargin draws the
    whole figure again. The picture is the new figure drawn from scratch, drawn once, with
    one plotly_afterplot and no Plotly call from the page."""
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_rendered(page)
    show(page, "#plot-dropout-kept")
    key = "dropout-kept"
    page.evaluate(
        """(k) => { const el = document.getElementById(`plot-${k}`);
           window.ffnBefore = [el.ffnRowRepaints ?? 0, el._fullLayout._size.l];
           window.ffnAfterplots = 0;
           el.on('plotly_afterplot', () => { window.ffnAfterplots += 1; }); }""",
        key,
    )
    page.evaluate(SPY)
    _step_tokens(page, 12)
    show(page, "#plot-dropout-kept")
    page.wait_for_function(
        """(k) => (document.getElementById(`plot-${k}`).ffnRowRepaints ?? 0)
             > window.ffnBefore[0]""",
        arg=key,
    )
    assert page.evaluate("() => window.ffnAfterplots") == 1
    calls = page.evaluate("() => window.ffnCalls")
    assert not [c for c in calls if c.split(":")[1] == f"plot-{key}"], calls
    # new margins for "10": wider than before
    left = page.evaluate(f"() => document.getElementById('plot-{key}')._fullLayout._size.l")
    assert left > page.evaluate("() => window.ffnBefore[1]")
    assert page.evaluate(f"() => document.getElementById('plot-{key}').data[0].z.length") == 12
    pictures = page.evaluate(FRESH, [f"plot-{key}"])
    assert pictures[f"plot-{key}"]["page"] == pictures[f"plot-{key}"]["fresh"]
    assert page.recorder.errors == []


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
    _step_seed(page, 5)
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
        _step_seed(page, 7)
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
        _step_seed(page, 7)
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
    sent = _step_tokens(page, 64)["pre_activation_histogram"]
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
