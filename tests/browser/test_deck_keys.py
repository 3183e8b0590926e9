"""Slides and clickers: FFN Lab embedded in a real reveal.js deck gives the deck its keys.

A small deck (tests/browser/fixtures/deck/) is served by this test's own static server, with
reveal.js from node_modules (npm `reveal.js`, pinned in package.json; nothing from a CDN);
its middle slide holds FFN Lab (`?embed=1`) in an iframe from the app server (another
origin). After a drag of a slider, or a click or a tap inside the embed, a clicker's PageDown
and PageUp, Space, and the arrow keys (when no slider has focus) must move the deck; an arrow
key on a focused slider moves the slider and not the deck. The deck's own `slidechanged`
events are read, so a key that stayed in the embed fails the wait.
"""

from __future__ import annotations

import json
import mimetypes
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.browser.conftest import ROOT

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).parent / "fixtures" / "deck"
REVEAL = ROOT / "node_modules" / "reveal.js" / "dist"
TIMEOUT = 30_000  # ms


def _files(path: str) -> Path | None:
    """The file a deck URL path names: the fixture's own files and /reveal/* from npm."""
    if path.startswith("/reveal/"):
        base, rest = REVEAL, path[len("/reveal/") :]
    else:
        base, rest = FIXTURE, path.lstrip("/")
    target = (base / rest).resolve()
    if not target.is_file() or not target.is_relative_to(base.resolve()):
        return None
    return target


class _DeckHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        target = _files(urlsplit(self.path).path)
        if target is None:
            self.send_error(404)
            return
        body = target.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", mimetypes.guess_type(target.name)[0] or "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def deck_url() -> Iterator[str]:
    """Base URL of a static server for the deck and reveal.js (stopped after the module)."""
    if not (REVEAL / "reveal.js").is_file():
        message = f"{REVEAL} not found: npm ci (reveal.js is a devDependency)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DeckHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def _open_deck(browser: Any, server_url: str, deck_url: str, touch: bool) -> tuple[Any, Any, Any]:
    """The deck on its FFN Lab slide, the embed drawn; returns (context, page, frame)."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 720}, has_touch=touch, locale="en-US"
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    app = f"{server_url}/?embed=1&lang=en"
    page.goto(f"{deck_url}/deck.html?app={quote(app, safe='')}")
    page.wait_for_function("() => window.deckReady === true", timeout=TIMEOUT)
    frame = page.locator("#ffn-lab").element_handle().content_frame()
    frame.locator("body[data-forward-seq]").wait_for(state="attached", timeout=TIMEOUT)
    frame.locator("#plot-hidden .main-svg").first.wait_for(timeout=TIMEOUT)
    _to_slide(page, 1)
    return context, page, frame


def _to_slide(page: Any, h: int) -> None:
    """Show slide `h` (the deck's own API) and forget the slide changes so far."""
    page.evaluate(f"() => Reveal.slide({h})")
    page.wait_for_function(f"() => Reveal.getIndices().h === {h}")
    page.evaluate("() => { window.deckEvents = []; }")


def _deck_moved_to(page: Any, h: int) -> None:
    """Wait for the deck's slidechanged to slide `h`; it must be the only change."""
    page.wait_for_function(
        f"() => window.deckEvents.length > 0 && Reveal.getIndices().h === {h}", timeout=TIMEOUT
    )
    assert page.evaluate("() => window.deckEvents") == [h]


def _touch_embed(page: Any, frame: Any, touch: bool) -> None:
    """A click (or a tap) inside the embed, off every control: the focus is in the embed."""
    target = frame.locator("#shape-input")
    box = target.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    if touch:
        page.touchscreen.tap(x, y)
    else:
        page.mouse.click(x, y)
    frame.wait_for_function("() => document.hasFocus()")


def _drag_slider(page: Any, frame: Any, selector: str) -> None:
    """Drag slider `selector` inside the embed with the mouse, from its left part to its right."""
    seq = frame.evaluate("() => document.body.dataset.forwardSeq")
    box = frame.locator(selector).bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.2, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=4)
    page.mouse.move(box["x"] + box["width"] * 0.8, y, steps=4)
    page.mouse.up()
    frame.wait_for_function(
        f"() => document.body.dataset.forwardSeq !== {json.dumps(seq)}", timeout=TIMEOUT
    )


@pytest.mark.parametrize("touch", [False, True], ids=["mouse", "touch"])
def test_clicker_keys_move_the_deck_from_inside_the_embed(browser, server_url, deck_url, touch):  # type: ignore[no-untyped-def]
    context, page, frame = _open_deck(browser, server_url, deck_url, touch)
    try:
        # a slider dragged: it has the focus; an arrow key moves it, not the deck
        _drag_slider(page, frame, "#d_ff")
        assert frame.evaluate("() => document.activeElement.id") == "d_ff"
        dragged = frame.evaluate("() => document.getElementById('d_ff').value")
        page.keyboard.press("ArrowRight")
        moved = frame.evaluate("() => document.getElementById('d_ff').value")
        assert moved != dragged
        # PageDown still goes to the deck (the slider keeps its value: no jump of a page)
        page.keyboard.press("PageDown")
        _deck_moved_to(page, 2)
        assert frame.evaluate("() => document.getElementById('d_ff').value") == moved

        # a click or a tap inside the embed, then the clicker's and the keyboard's keys
        for key, h in [("Space", 2), ("ArrowRight", 2), ("PageUp", 0), ("ArrowLeft", 0)]:
            _to_slide(page, 1)
            _touch_embed(page, frame, touch)
            page.keyboard.press(key)
            _deck_moved_to(page, h)
        assert page.errors == []
    finally:
        context.close()


def test_deck_keys_stay_on_a_page_that_is_not_embedded(page, server_url):  # type: ignore[no-untyped-def]
    """The normal page (and ?embed=1 opened on its own) keeps its keys: nothing is sent to a
    parent, and PageDown on a focused slider is the slider's (the browser's own step)."""
    page.goto(f"{server_url}/?embed=1&lang=en")
    page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=TIMEOUT)
    page.evaluate(
        "() => { window.sent = []; const post = window.postMessage.bind(window);"
        " window.postMessage = (m, o) => { window.sent.push(m); return post(m, o); }; }"
    )
    page.locator("#d_ff").focus()
    before = page.evaluate("() => document.getElementById('d_ff').value")
    page.keyboard.press("PageDown")
    page.wait_for_function(
        f"() => document.getElementById('d_ff').value !== {json.dumps(before)}", timeout=TIMEOUT
    )
    assert page.evaluate("() => window.sent") == []
