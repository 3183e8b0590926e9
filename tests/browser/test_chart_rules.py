"""The page's charts use the rules the Python figures use (static/js/charts/rules.json)."""

from __future__ import annotations

from app.lab.figures import parts as figure_parts
from tests.browser.conftest import wait_rendered


def test_page_and_python_figures_share_the_chart_rules(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(server_url + "/")
    wait_rendered(page)
    main = page.locator("script[type=module]").get_attribute("src")
    prefix = main.rsplit("/js/", 1)[0]
    got = page.evaluate(
        """async (prefix) => {
          const c = await import(`${prefix}/js/charts/common.js`);
          const w = await import(`${prefix}/js/windows.js`);
          const h = await import(`${prefix}/js/charts/heatmap.js`);
          const q = [[...Array(1000).keys()].map((i) => i - 500)];
          return { diverging: c.DIVERGING, accent: c.ACCENT, muted: c.MUTED,
                   window: w.WIDTH, zmax: h.robustRange(q).zmax };
        }""",
        prefix,
    )
    assert got["diverging"] == figure_parts.DIVERGING
    assert got["accent"] == figure_parts.ACCENT and got["muted"] == figure_parts.MUTED
    assert got["window"] == figure_parts.WINDOW
    values = [[i - 500 for i in range(1000)]]
    assert got["zmax"] == figure_parts.robust_zmax(values)
    # the heatmap drawn on the page uses that scale
    scale = page.evaluate("() => document.getElementById('plot-pre_activation').data[0].colorscale")
    assert scale == figure_parts.DIVERGING


def test_relu_hidden_units_are_coloured_by_the_scale_s_upper_half(page, server_url):  # type: ignore[no-untyped-def]
    """ReLU's hidden units are never negative: their heatmap's colour bar runs from 0 (white)
    to its largest value (red), with no blue half and no "−1" that no value takes, on the
    upper half of the diverging scale (each value in the colour the whole scale gives it),
    as the Python figures draw it. GELU's hidden units can be negative: the whole scale."""
    read = """() => { const d = document.getElementById('plot-hidden').data[0];
      return { zmin: d.zmin, zmax: d.zmax, zmid: d.zmid ?? null, scale: d.colorscale,
        low: Math.min(...d.z.flat()),
        ticks: [...document.querySelectorAll('#plot-hidden .cbaxis text')]
          .map((t) => t.textContent) }; }"""
    page.goto(f"{server_url}/?activation=relu")
    wait_rendered(page)
    relu = page.evaluate(read)
    assert relu["low"] == 0
    assert relu["zmin"] == 0 and relu["zmid"] is None
    assert relu["scale"] == figure_parts.DIVERGING_POSITIVE
    assert relu["ticks"] and not [t for t in relu["ticks"] if t.startswith("−")], relu["ticks"]
    assert len(relu["ticks"]) >= 3, relu["ticks"]  # 0 and steps along the whole bar
    # each stop of the half is the whole scale's colour at the same value
    whole = dict((at, colour) for at, colour in figure_parts.DIVERGING)
    for at, colour in relu["scale"]:
        assert whole[0.5 + at / 2] == colour
    page.goto(f"{server_url}/?activation=gelu")
    wait_rendered(page)
    gelu = page.evaluate(read)
    assert gelu["low"] < 0
    assert gelu["zmin"] == -gelu["zmax"] and gelu["zmid"] == 0
    assert gelu["scale"] == figure_parts.DIVERGING
