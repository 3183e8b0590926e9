"""The ring a lesson step draws around what it is about crosses no text.

At every step, read from the drawn page: each ring (`.lesson-ring`, the outline around a
highlighted plot's whole frame, a panel or a control) lies where no visible text outside it
is (the part of it a scrolling box shows), neither the flow's arrows and shape captions
beside a plot, nor its export buttons, nor the last line of the panel above. Steps are
walked by keyboard at 1280x720; a few on a phone and in an embed, where the plots sit
closest together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.classroom import wait_answers

pytestmark = pytest.mark.browser
STEPS = 20
TIMEOUT = 120_000  # the training steps stream on two shared cores

CROSSINGS = (Path(__file__).parent / "ring_probe.js").read_text(encoding="utf-8")


def _settled(page: Any) -> None:
    wait_answers(page, timeout=TIMEOUT)
    page.wait_for_function("() => document.body.dataset.busy === '0'", timeout=TIMEOUT)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _crossings(page: Any) -> dict[str, Any]:
    got: dict[str, Any] = page.evaluate(CROSSINGS)
    return got


@pytest.mark.slow
def test_no_step_rings_text(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?lang=en&lesson=1")
    problems = []
    for n in range(1, STEPS + 1):
        page.locator(f"body[data-lesson-step='{n}']").wait_for(state="attached", timeout=TIMEOUT)
        _settled(page)
        got = _crossings(page)
        assert got["rings"] >= 1, n  # every step shows what it is about
        problems += [(n, c) for c in got["crossed"]]
        if n < STEPS:
            page.keyboard.press("ArrowRight")
    assert problems == []
    assert page.recorder.errors == []


@pytest.mark.parametrize(
    ("size", "query"),
    [((390, 844), "step=3"), ((390, 844), "step=4"), ((800, 450), "embed=1&step=3")],
)
def test_rings_on_a_phone_and_in_an_embed_cross_no_text(page, server_url, size, query):  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{server_url}/?lang=en&lesson=1&{query}")
    page.locator("body[data-lesson-step]:not([data-lesson-step=''])").wait_for(state="attached")
    _settled(page)
    got = _crossings(page)
    assert got["rings"] >= 1
    assert got["crossed"] == []
    assert page.recorder.errors == []
