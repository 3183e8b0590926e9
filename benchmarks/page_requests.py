"""Requests and bytes per Tokens-slider keyboard step, per preset, in headless Chromium.

The page at 1280x720 as it opens (all views, scrolled to the top); one keyboard step of the
Tokens slider (ArrowLeft, then back with ArrowRight, alternating); counted from the Resource
API requests the step made (Playwright's request events; bytes = response body sizes as
sent, no compression on loopback; an aborted request counts with 0 bytes). Waits for the
forward answer to be drawn and for no /api/ request to be in flight. Median of `--steps`
steps after one warm-up.

    python -m benchmarks.page_requests                 # this checkout
    python -m benchmarks.page_requests --root /work/main  # another checkout (before/after)
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.server import COMPUTED
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.serverproc import start_server, stop_server

PRESETS = {
    "default 16->64": "/",
    "Transformer-base": "/?preset=transformer-base",
    "BERT-base": "/?preset=bert-base",
    "LLaMA-7B": "/?preset=llama-7b",
}

# Settled: the forward answer of this step is drawn (the rest: no /api/ request in flight).
_SETTLED = "(before) => document.body.dataset.forwardSeq !== before"


class Tracker:
    """The page's /api/ POST requests: in flight, and (path, response bytes) once done."""

    def __init__(self) -> None:
        self.inflight: set[object] = set()
        self.done: list[tuple[str, int]] = []

    def started(self, r) -> None:  # type: ignore[no-untyped-def]
        if "/api/" in r.url and r.method == "POST":
            self.inflight.add(r)

    def finished(self, r) -> None:  # type: ignore[no-untyped-def]
        if r in self.inflight:
            self.inflight.discard(r)
            self.done.append((urlsplit(r.url).path, r.sizes()["responseBodySize"]))

    def failed(self, r) -> None:  # type: ignore[no-untyped-def]
        if r in self.inflight:
            self.inflight.discard(r)
            self.done.append((urlsplit(r.url).path + " (aborted)", 0))


def measure(base: str, steps: int) -> dict[str, tuple[float, float, list[str]]]:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, path in PRESETS.items():
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                page = context.new_page()
                tracker = Tracker()
                inflight, done = tracker.inflight, tracker.done
                page.on("request", tracker.started)
                page.on("requestfinished", tracker.finished)
                page.on("requestfailed", tracker.failed)
                page.goto(base + path)
                page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=180_000)
                quiet(page, inflight)
                counts, sizes, names = [], [], []
                for i in range(steps + 1):
                    done.clear()
                    before = page.locator("body").get_attribute("data-forward-seq")
                    page.locator("#tokens").focus()
                    page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
                    page.wait_for_function(_SETTLED, arg=before, timeout=180_000)
                    quiet(page, inflight)
                    if i == 0:
                        continue  # warm-up
                    counts.append(len(done))
                    sizes.append(sum(size for _, size in done))
                    names = sorted(n for n, _ in done)
                out[name] = (statistics.median(counts), statistics.median(sizes), names)
                context.close()
        finally:
            browser.close()
    return out


def quiet(page, inflight: set[object], timeout_s: float = 180) -> None:  # type: ignore[no-untyped-def]
    """Poll until no /api/ request of the page is in flight (events are processed meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while inflight and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    page.wait_for_timeout(300)  # a request started by a drawn answer (e.g. conv1d after budget)
    while inflight and time.monotonic() < deadline:
        page.wait_for_timeout(100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    proc, base = start_server(COMPUTED, root=args.root)
    try:
        results = measure(base, args.steps)
    finally:
        stop_server(proc)
    print(f"checkout {args.root}; 1280x720, page as it opens; median of {args.steps} steps")
    print(f"{'preset':<18} {'requests/step':>13} {'bytes/step':>12}  endpoints")
    for name, (count, size, names) in results.items():
        print(f"{name:<18} {count:>13g} {size / 1e6:>10.3f} MB  {', '.join(names)}")


if __name__ == "__main__":
    main()
