"""A student's page: bytes of the first load and of a reload, and the phone's first flow.

    python -m benchmarks.page_load                 # this checkout, a fresh server
    python -m benchmarks.page_load --base http://127.0.0.1:8000

Bytes are what Chromium's network stack received (CDP `Network.loadingFinished`
`encodedDataLength`: headers and the body as sent, compressed or not), counted from the
navigation until the page is idle (the first flow drawn, no request for 1 s):

- first load: a new browser context (empty cache), 390x844 phone (touch, scale 3);
- reload: `page.reload()` in that same context (what a student's browser does on F5:
  the page revalidated, subresources from the cache when their headers allow it).

First flow on a phone: a new phone context with Chromium's CPU slowdown at 4x (CDP
`Emulation.setCPUThrottlingRate`), time from `goto` to the first flow chart drawn
(`#plot-hidden .main-svg`), loopback; median of `--repeat` loads, each in a fresh context.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.client import percentile
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 3,
    "locale": "en-US",
}
FIRST_FLOW = "#plot-hidden .main-svg"


@dataclass(frozen=True)
class LoadBytes:
    """Bytes received and requests made: the first load and the reload, with the largest
    transfers of each (url, bytes)."""

    first_bytes: int
    first_requests: int
    reload_bytes: int
    reload_requests: int
    first_top: list[tuple[str, int]]
    reload_top: list[tuple[str, int]]


class _Counter:
    """Sums `encodedDataLength` of every finished or failed request seen through CDP."""

    def __init__(self, page: Page) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        self.urls: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.loadingFinished", self._done)
        self.cdp.on("Network.loadingFailed", lambda e: self.sizes.setdefault(e["requestId"], 0))

    def _sent(self, event: dict[str, Any]) -> None:
        self.urls[event["requestId"]] = event["request"]["url"]

    def _done(self, event: dict[str, Any]) -> None:
        self.sizes[event["requestId"]] = int(event["encodedDataLength"])

    def reset(self) -> None:
        self.urls.clear()
        self.sizes.clear()

    def total(self) -> tuple[int, int, list[tuple[str, int]]]:
        top = sorted(
            ((self.urls.get(k, "?").split("/", 3)[-1], v) for k, v in self.sizes.items()),
            key=lambda kv: -kv[1],
        )
        return sum(self.sizes.values()), len(self.urls), top[:5]


def _idle(page: Page, counter: _Counter, quiet_s: float = 1.0, timeout_s: float = 120) -> None:
    """Wait for the first flow, then until no request has started or ended for `quiet_s`."""
    page.locator(FIRST_FLOW).first.wait_for(timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    seen = -1
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(100)
        now = len(counter.urls) + len(counter.sizes)
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s and len(counter.sizes) >= len(counter.urls):
            return
    raise RuntimeError("the page kept loading")


def measure_bytes(browser: Browser, base: str, query: str = "") -> LoadBytes:
    """First load and reload of the page (phone context) in bytes received."""
    context = browser.new_context(**PHONE)
    try:
        page = context.new_page()
        counter = _Counter(page)
        page.goto(f"{base}/?{query}" if query else f"{base}/")
        _idle(page, counter)
        first, first_n, first_top = counter.total()
        counter.reset()
        page.reload()
        _idle(page, counter)
        again, again_n, again_top = counter.total()
    finally:
        context.close()
    return LoadBytes(first, first_n, again, again_n, first_top, again_top)


def _phone_context(browser: Browser) -> tuple[BrowserContext, Page]:
    context = browser.new_context(**PHONE)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    return context, page


def phone_first_flow(browser: Browser, base: str, repeat: int) -> list[float]:
    """Seconds from navigation to the first flow chart drawn, 4x CPU slowdown, each load in
    a fresh phone context (empty cache)."""
    times: list[float] = []
    for _ in range(repeat):
        context, page = _phone_context(browser)
        try:
            t0 = time.perf_counter()
            page.goto(f"{base}/", wait_until="commit")
            page.locator(FIRST_FLOW).first.wait_for(timeout=120_000)
            times.append(time.perf_counter() - t0)
        finally:
            context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="a running server (default: start this checkout's)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.serverproc import start_server, stop_server

    proc = None
    base = args.base
    if not base:
        proc, base = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            got = measure_bytes(browser, base)
            load = " ".join(f"{v:.2f}" for v in os.getloadavg())
            print(
                f"first load {got.first_bytes / 1e3:.0f} kB in {got.first_requests} requests "
                f"(bound <= 1000 kB); load {load}"
            )
            for url, size in got.first_top:
                print(f"    {size / 1e3:8.1f} kB  {url[:90]}")
            print(
                f"reload {got.reload_bytes / 1e3:.1f} kB in {got.reload_requests} requests "
                f"(bound <= 50 kB)"
            )
            for url, size in got.reload_top:
                print(f"    {size / 1e3:8.1f} kB  {url[:90]}")
            flows = phone_first_flow(browser, base, args.repeat)
            load = " ".join(f"{v:.2f}" for v in os.getloadavg())
            print(
                f"phone first flow p50 {percentile(flows, 50):.2f} s of {args.repeat} "
                f"({', '.join(f'{t:.2f}' for t in flows)}; bound <= 3 s); load {load}"
            )
            browser.close()
    finally:
        if proc is not None:
            stop_server(proc)


if __name__ == "__main__":
    main()
