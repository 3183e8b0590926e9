"""Dragging a slider draws values as it goes, with one forward request in flight, and ends
on the value where the pointer let go."""

from __future__ import annotations

import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser

WATCH = """() => {
  window.ffnRows = [];
  const el = document.getElementById('plot-hidden');
  el.on('plotly_afterplot', () => window.ffnRows.push(el.data[0].z.length));
}"""


def _hold_and_drag(page, to: float) -> None:  # type: ignore[no-untyped-def]
    """Press the mouse on the Tokens slider's left end and drag it, in 60ths of its width, to
    the fraction `to` of it; the button stays down."""
    box = page.locator("#tokens").bounding_box()
    assert box
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 4, y)
    page.mouse.down()
    for i in range(1, round(60 * to) + 1):
        page.mouse.move(box["x"] + 4 + (box["width"] - 8) * i / 60, y)


def test_a_drag_draws_values_on_the_way_without_cancelled_requests(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=64&d_ff=256&tokens=2")
    wait_rendered(page)
    page.evaluate(WATCH)
    sent: list[str] = []
    failed: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/api/forward") else None)
    page.on(
        "requestfailed", lambda r: failed.append(r.url) if r.url.endswith("/api/forward") else None
    )
    slider = page.locator("#tokens")
    _hold_and_drag(page, 1)
    page.mouse.up()
    last = int(slider.input_value())
    assert last > 30
    page.locator(f"#plot-hidden[data-rows='{last}']").wait_for(state="attached")
    wait_rendered(page)
    page.wait_for_function(f"() => window.ffnRows.includes({last})")
    rows = page.evaluate("() => window.ffnRows")
    drawn = sorted({r for r in rows if r != 2})
    assert drawn[-1] == last  # the value where the pointer let go is drawn
    assert len(drawn) >= 3, rows  # and values on the way, not only the last
    assert failed == []  # no request was cancelled to make room for a newer one
    assert len(sent) <= len(drawn) + 1  # one request per value drawn: no storm


def test_the_address_bar_names_the_value_let_go_at_and_is_not_written_during_a_drag(  # type: ignore[no-untyped-def]
    page, server_url
):
    """Chromium ignores history.replaceState beyond 200 calls in 10 s: a drag writes the
    address bar once, when the pointer lets go, with the value it let go at."""
    page.goto(f"{server_url}/?d_model=64&d_ff=256&tokens=2")
    wait_rendered(page)
    page.evaluate(WATCH)
    page.evaluate(
        """() => { window.ffnWrites = [];
          const write = history.replaceState.bind(history);
          history.replaceState = (...args) => {
            window.ffnWrites.push(String(args[2]));
            write(...args);
          }; }"""
    )
    slider = page.locator("#tokens")
    _hold_and_drag(page, 0.5)
    # values are drawn while the pointer still holds the slider ...
    page.wait_for_function("() => new Set(window.ffnRows).size >= 2")
    held = int(slider.input_value())
    page.locator(f"#plot-hidden[data-rows='{held}']").wait_for(state="attached")
    wait_rendered(page)
    # ... and the address bar is not written meanwhile
    assert page.evaluate("() => window.ffnWrites") == []
    page.mouse.up()
    page.wait_for_function("() => window.ffnWrites.length > 0")
    writes = page.evaluate("() => window.ffnWrites")
    assert len(writes) == 1, writes
    assert f"tokens={held}" in writes[0]
    assert f"tokens={held}" in page.evaluate("() => location.search")
