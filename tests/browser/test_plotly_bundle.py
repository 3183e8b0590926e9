"""The plotly.js bundle the page loads draws every trace type the page's scripts use."""

from __future__ import annotations

import re

import plotly.graph_objects as go

from tests.browser.conftest import ROOT, wait_rendered

TRACE_TYPES = set(go.layout.template.Data()._valid_props)
"""Every Plotly trace type (heatmap, bar, scatter, image, ...), from the Python package."""


def _page_trace_types() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "static" / "js").rglob("*.js"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"""\btype:\s*["']([a-z0-9]+)["']""", text)) & TRACE_TYPES
    return found


def test_every_trace_type_of_the_page_is_in_the_served_bundle(page, server_url):  # type: ignore[no-untyped-def]
    used = _page_trace_types()
    assert {"heatmap", "bar", "scatter"} <= used
    page.goto(server_url + "/")
    wait_rendered(page)
    registered = set(page.evaluate("() => Object.keys(Plotly.PlotSchema.get().traces)"))
    assert used <= registered, sorted(used - registered)
    drawn = set(
        page.evaluate(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .flatMap((el) => (el._fullData || []).map((t) => t.type))"""
        )
    )
    assert drawn and drawn <= used, sorted(drawn - used)
    assert page.recorder.errors == []
