"""No modebar, and nothing on the page or in the snapshot reaches Plotly's cloud.

Plotly's modebar offered "share chart" (an upload to Plotly's cloud). The plots are drawn
without it; the page's own PNG/SVG buttons (Plotly.downloadImage) still work.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.classroom import wait_answers

pytestmark = pytest.mark.browser

CLOUD = re.compile(r"plot\.ly|plotly\.com|chart-studio", re.IGNORECASE)

# Every attribute that can make the browser go somewhere, and every modebar element
# (Plotly keeps an empty .modebar-container even without a modebar).
DOM_LINKS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('*')) {
    for (const name of ['href', 'xlink:href', 'src', 'action', 'formaction', 'data']) {
      const v = el.getAttribute(name);
      if (v) out.push(v);
    }
  }
  return {
    links: out,
    modebars: document.querySelectorAll('.modebar, .modebar-btn, .modebar-group').length,
    plots: document.querySelectorAll('.js-plotly-plot').length,
  };
}"""


def _route_cloud(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Abort and record every request to a Plotly cloud host (there must be none)."""
    hits: list[str] = []

    def handle(route) -> None:  # type: ignore[no-untyped-def]
        hits.append(route.request.url)
        route.abort()

    page.route(CLOUD, handle)
    return hits


def _check_dom(page) -> None:  # type: ignore[no-untyped-def]
    found = page.evaluate(DOM_LINKS)
    assert found["plots"] > 0
    assert found["modebars"] == 0, "a Plotly modebar is drawn"
    assert [u for u in found["links"] if CLOUD.search(u)] == []


def test_page_has_no_modebar_and_no_cloud_link(page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    hits = _route_cloud(page)
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6&activation=swiglu")
    wait_answers(page)
    _check_dom(page)
    # every plot's config says so too (a later redraw cannot bring the modebar back)
    configs = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(el => [el.id, el._context.displayModeBar])"
    )
    assert configs and all(c[1] is False for c in configs), configs
    # hovering a plot (where the modebar used to appear) shows none
    page.locator("#plot-hidden").hover()
    assert page.locator(".modebar").count() == 0
    # the page's own image buttons still export through Plotly.downloadImage
    button = page.locator('.plot-tools button[data-plot="plot-output"][data-format="svg"]')
    with page.expect_download() as info:
        button.click()
    path = tmp_path / "out.svg"
    info.value.save_as(path)
    text = path.read_text()
    assert text.startswith("<svg") and not CLOUD.search(text.split("<style", 1)[0])
    assert hits == []
    assert page.recorder.foreign() == []
    assert [u for u in page.recorder.requests if CLOUD.search(u)] == []


def test_snapshot_has_no_modebar_and_no_cloud_link(browser, page, server_url, tmp_path):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?d_model=16&d_ff=64&tokens=6")
    wait_answers(page)
    page.locator("#export-menu summary").click()
    with page.expect_download() as info:
        page.locator("#export-snapshot").click()
    path = tmp_path / "snapshot.html"
    info.value.save_as(path)
    offline = browser.new_context(offline=True)
    try:
        viewer = offline.new_page()
        hits = _route_cloud(viewer)
        requests: list[str] = []
        viewer.on("request", lambda r: requests.append(r.url))
        viewer.goto(path.as_uri())
        viewer.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        viewer.locator("#plot-hidden").hover()
        _check_dom(viewer)
        assert hits == []
        assert [u for u in requests if not u.startswith(("file:", "data:", "blob:"))] == []
    finally:
        offline.close()
