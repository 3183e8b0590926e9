"""Browser fixtures: the real server in a subprocess, Debian's Chromium driven by Playwright.

Chromium is not downloaded (that fails here): it must be /usr/bin/chromium (Debian package
`chromium`). Without it these tests are skipped on a developer's machine and fail in CI
(when the CI variable is set), so CI never passes without running them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.serverproc import start_server, stop_server

CHROMIUM = os.environ.get("FFN_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
BROWSER_TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in tests/browser/ is marked `browser`, by its folder (a new file there
    needs no mark of its own to be left out by `-m "not browser"`)."""
    for item in items:
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(pytest.mark.browser)


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    message = f"{CHROMIUM} not found: apt-get install -y chromium"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """Base URL of a real server process for the whole session."""
    proc, base = start_server()
    yield base
    stop_server(proc)


class PageRecorder:
    """Every request URL a page made, and the console errors it printed."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.requests: list[str] = []
        self.errors: list[str] = []

    def foreign(self) -> list[str]:
        """Requests that left the page's origin (data: and blob: URLs stay local)."""
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about"):
                continue
            if f"{parts.scheme}://{parts.netloc}" != self.origin:
                out.append(url)
        return out


@pytest.fixture
def page(browser, server_url):  # type: ignore[no-untyped-def]
    """A fresh 1280x720 page; `page.recorder` holds its requests and console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    pg = context.new_page()
    recorder = PageRecorder(server_url)
    pg.on("request", lambda r: recorder.requests.append(r.url))
    pg.on("console", lambda m: recorder.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: recorder.errors.append(str(e)))
    pg.recorder = recorder
    yield pg
    context.close()


def wait_rendered(pg, forward_seq: int | None = None, timeout: float = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page has drawn the forward answer and every view in sight is settled.

    Views out of sight are not requested (static/js/live.js): a test that reads one scrolls
    it into view first (`show(page, "#perturb")`).
    """
    pg.locator(".js-plotly-plot").first.wait_for(timeout=timeout)
    selector = "body[data-forward-seq]"
    if forward_seq is not None:
        selector = f'body[data-forward-seq="{forward_seq}"]'
    pg.locator(selector).wait_for(state="attached", timeout=timeout)
    settled(pg, timeout)


def settled(pg, timeout: float = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until no view of the page waits for an answer (no section is aria-busy)."""
    pg.wait_for_function(
        "() => !document.querySelector('section[aria-busy=\"true\"]')", timeout=timeout
    )


LAYOUT_STABLE_JS = """() => new Promise((resolve) => {
  const snap = () => JSON.stringify([
    document.scrollingElement.scrollHeight, document.scrollingElement.scrollWidth,
    [...document.querySelectorAll('.js-plotly-plot')].map((p) => {
      const b = p.getBoundingClientRect();
      return [b.left, b.top, b.width, b.height, p.querySelectorAll('.main-svg *').length];
    }),
  ]);
  let last = null;
  const step = () => {
    const now = snap();
    if (now === last) { resolve(true); return; }
    last = now;
    requestAnimationFrame(() => requestAnimationFrame(step));
  };
  requestAnimationFrame(step);
})"""


def layout_stable(pg) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page has stopped moving: no view waits for an answer and the document
    size and every plot's box and drawn elements are the same across two frames (a plot
    redrawn or resized after its answer, e.g. by Plotly's responsive resize, is waited for).
    For screenshots and measurements of the drawn page."""
    settled(pg)
    pg.evaluate(LAYOUT_STABLE_JS)


def show(pg, selector: str, timeout: float = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Scroll `selector` into view and wait until its view has been requested and drawn."""
    pg.locator(selector).first.scroll_into_view_if_needed()
    pg.wait_for_function(
        """(sel) => { const s = document.querySelector(sel).closest('section');
          return s && !s.dataset.stale && s.getAttribute('aria-busy') !== 'true'; }""",
        arg=selector,
        timeout=timeout,
    )
