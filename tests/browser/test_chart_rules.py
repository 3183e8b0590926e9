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
    scale = page.evaluate("() => document.getElementById('plot-hidden').data[0].colorscale")
    assert scale == figure_parts.DIVERGING
