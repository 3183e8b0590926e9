"""A Tokens step (new rows, the same columns) redraws what changed by Plotly's own steps:
the cells, the y axis and the colour bar; the picture is the new figure drawn from scratch,
and each plot keeps its place."""

from __future__ import annotations

import pytest

from tests.browser.conftest import show, wait_rendered
from tests.browser.steps import FLOW, FRESH, PLACES, SPY, step_seed, step_tokens

pytestmark = pytest.mark.browser


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
    sent = step_tokens(page, tokens)
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
    step_tokens(page, 8)
    for seed in (1, 2):
        step_seed(page, seed)
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
    step_tokens(page, 12)
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
