"""Slider input -> plotly_afterplot in headless Chromium (Debian's, through Playwright).

One sample: the page is idle and fully drawn; the script moves the `tokens` slider one
step (T <-> T-1), dispatches the slider's `input` event, and waits until the forward answer
is drawn (body data-forward-seq advances) and no view in sight waits for an answer (body
data-busy is 0; views out of sight are not requested, static/js/live.js). The time is from
the input event to the last `plotly_afterplot` event any chart fired; the network part
(fetch start to response end of /api/forward, from Resource Timing) is reported next to it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.client import percentile
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # one definition of the flags

if TYPE_CHECKING:
    from playwright.sync_api import Page

# Runs in the page: one slider step, resolved with the timings in milliseconds.
_STEP_JS = """
async (value) => {
  const body = document.body;
  const before = [body.dataset.forwardSeq, body.dataset.perturbSeq];
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  let last = NaN;
  let charts = 0;
  const mark = () => { last = performance.now(); charts += 1; };
  for (const p of plots) p.on('plotly_afterplot', mark);
  performance.clearResourceTimings();
  const slider = document.getElementById('tokens');
  const done = new Promise((resolve) => {
    // Only the views in sight are requested (static/js/live.js): done when the forward
    // answer is drawn and no view waits (body data-busy counts the busy sections).
    const check = () => body.dataset.forwardSeq !== before[0] && body.dataset.busy === '0';
    const observer = new MutationObserver(() => {
      if (check()) { observer.disconnect(); resolve(); }
    });
    observer.observe(body, { attributes: true });
  });
  const t0 = performance.now();
  slider.value = String(value);
  slider.dispatchEvent(new Event('input', { bubbles: true }));
  await done;
  const rendered = performance.now();
  await new Promise((r) => requestAnimationFrame(() => r()));
  for (const p of plots) p.removeListener('plotly_afterplot', mark);
  const api = performance.getEntriesByType('resource')
    .filter((e) => e.name.endsWith('/api/forward'));
  const last_api = api[api.length - 1];
  const net = last_api ? last_api.responseEnd - last_api.startTime : NaN;
  return { afterplot: (Number.isNaN(last) ? rendered : last) - t0, net, charts };
}
"""

# Runs in the page: the cost of one Plotly.react of a tiny heatmap with a title and a colour
# bar (like the page's), median of 15 calls with fresh data: Plotly's floor per chart.
_FLOOR_JS = """
async () => {
  const host = document.createElement('div');
  host.style.cssText = 'width:400px;height:260px;position:absolute;top:0;left:0';
  document.body.appendChild(host);
  const times = [];
  for (let i = 0; i < 15; i++) {
    const z = [[Math.random(), -Math.random()], [Math.random(), 0]];
    const t0 = performance.now();
    await Plotly.react(host, [{ type: 'heatmap', z, zmid: 0, colorbar: { thickness: 8 } }],
      { title: { text: 'floor' }, margin: { l: 48, r: 8, t: 36, b: 40 } },
      { displaylogo: false, responsive: true });
    times.push(performance.now() - t0);
  }
  Plotly.purge(host);
  host.remove();
  times.sort((a, b) => a - b);
  return times[7];
}
"""


@dataclass(frozen=True)
class BrowserResult:
    """Milliseconds per slider step (input -> last plotly_afterplot) and their network part,
    the charts redrawn per step, and Plotly's floor: one Plotly.react of a tiny heatmap."""

    afterplot_ms: list[float]
    network_ms: list[float]
    charts: list[int]
    plotly_floor_ms: float

    def p(self, q: float) -> float:
        """q-th percentile of input -> plotly_afterplot in ms."""
        return percentile(self.afterplot_ms, q)

    def network_p50(self) -> float:
        """Median /api/forward fetch time in ms (Resource Timing)."""
        return percentile(self.network_ms, 50)

    def charts_p50(self) -> int:
        """Median number of charts one step redrew."""
        return round(percentile([float(c) for c in self.charts], 50))


def chromium_available() -> bool:
    """True when Debian's Chromium is installed where the tests expect it."""
    return Path(CHROMIUM).exists()


@contextmanager
def _page(viewport: tuple[int, int] = (1280, 720), phone: bool = False) -> Iterator[Page]:
    """A 1280x720 (or `viewport`) en-US page (CSP bypassed) in Debian's headless Chromium;
    `phone`: touch, device scale 3 and Chromium's CPU slowdown 4x. The browser is closed
    on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            extra: dict[str, object] = (
                {"is_mobile": True, "has_touch": True, "device_scale_factor": 3} if phone else {}
            )
            context = browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]},
                locale="en-US",
                bypass_csp=True,
                **extra,  # type: ignore[arg-type]
            )
            page = context.new_page()
            if phone:
                cdp = context.new_cdp_session(page)
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
            yield page
            context.close()
        finally:
            browser.close()


def _step_value(tokens: int, i: int) -> int:
    """The Tokens value of step `i` from T = `tokens`: T - 1 and back to T, alternately
    (2 and back to 1 when T is 1)."""
    if tokens == 1:
        return 2 if i % 2 == 0 else 1
    return tokens - 1 if i % 2 == 0 else tokens


def measure_sliders(
    base: str, sizes: dict[str, tuple[int, int, int]], steps: int, warmup: int = 2
) -> dict[str, BrowserResult]:
    """For each size name -> (T, d_model, d_ff), `steps` slider steps after `warmup` ones."""
    results: dict[str, BrowserResult] = {}
    with _page() as page:
        for name, (tokens, d_model, d_ff) in sizes.items():
            page.goto(f"{base}/?d_model={d_model}&d_ff={d_ff}&tokens={tokens}")
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            page.locator("body[data-forward-seq][data-busy='0']").wait_for(
                state="attached", timeout=60_000
            )
            floor = float(page.evaluate(_FLOOR_JS))
            afterplot: list[float] = []
            network: list[float] = []
            charts: list[int] = []
            for i in range(warmup + steps):
                out = page.evaluate(_STEP_JS, _step_value(tokens, i))
                if i >= warmup:
                    afterplot.append(float(out["afterplot"]))
                    network.append(float(out["net"]))
                    charts.append(int(out["charts"]))
            results[name] = BrowserResult(afterplot, network, charts, floor)
    return results


# ---- one Tokens step at a preset, as the page opens ("All views") ----

# Runs in the page: start one step. Every chart records its plotly_afterplot times and
# whether it was in the viewport then; resource timings are cleared so that the /api/
# entries that follow belong to this step.
_STEP_START_JS = """
([value, id, type]) => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const marks = [];
  const handlers = plots.map((p) => {
    const h = () => {
      const r = p.getBoundingClientRect();
      const visible = r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth
        && r.width > 0 && r.height > 0;
      marks.push({ t: performance.now(), visible, plot: p });
    };
    p.on('plotly_afterplot', h);
    return [p, h];
  });
  performance.clearResourceTimings();
  performance.setResourceTimingBufferSize(10000);
  window.__ffnStep = { t0: performance.now(), marks, handlers };
  const control = document.getElementById(id);
  control.value = String(value);
  control.dispatchEvent(new Event(type, { bubbles: true }));
}
"""

STEP_KINDS: dict[str, tuple[str, str]] = {
    "tokens": ("tokens", "input"),
    "seed": ("input_seed", "change"),
}
"""A step of each kind: the control moved and the event it fires. `tokens` (T <-> T-1)
changes the tensors' shapes; `seed` (the input seed s <-> s+1) changes their values only."""

# Runs in the page once the network is quiet: the step's figures, in ms from the input event.
_STEP_END_JS = """
() => {
  const s = window.__ffnStep;
  for (const [p, h] of s.handlers) p.removeListener('plotly_afterplot', h);
  const api = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/'));
  const visible = s.marks.filter((m) => m.visible).map((m) => m.t - s.t0);
  return {
    visible_ms: visible.length ? Math.max(...visible) : null,
    // charts, not events: a chart may fire plotly_afterplot twice in one step (a colour
    // bar redrawn, then its cells repainted: static/js/charts/heatmap.js)
    charts_visible: new Set(s.marks.filter((m) => m.visible).map((m) => m.plot)).size,
    charts_all: new Set(s.marks.map((m) => m.plot)).size,
    last_request_ms: api.length ? Math.max(...api.map((e) => e.responseEnd)) - s.t0 : null,
    bytes: api.reduce((n, e) => n + (e.encodedBodySize || 0), 0),
    requests: api.length,
  };
}
"""


@dataclass(frozen=True)
class StepResult:
    """Per slider step (one Tokens step, T <-> T-1): the last plotly_afterplot of a chart in
    the viewport, the last /api/ response end, the answers' bytes, the requests made (all
    from the input event, ms); and the request mix of the first measured step."""

    visible_ms: list[float]
    last_request_ms: list[float]
    bytes_per_step: list[int]
    requests_per_step: list[int]
    plotly_floor_ms: float
    mix: list[dict[str, object]]
    charts_visible: list[int]

    def p50(self, values: list[float] | list[int]) -> float:
        """Median of one of the lists."""
        return percentile([float(v) for v in values], 50)


PAGE_PRESETS: dict[str, str] = {
    "default": "",
    "transformer-base": "preset=transformer-base&d_model=512&d_ff=2048&activation=relu&tokens=8",
    "bert-base": "preset=bert-base&d_model=768&d_ff=3072&activation=gelu&tokens=8",
    "llama-7b": "preset=llama-7b&d_model=4096&d_ff=11008&activation=swiglu&bias=false&tokens=8",
}
"""The page's URL query per preset of the live-page table (default: the page as it opens)."""


def measure_steps(
    base: str,
    presets: dict[str, str],
    steps: int,
    warmup: int = 1,
    quiet_ms: int = 500,
    kind: str = "tokens",
    viewport: tuple[int, int] = (1280, 720),
    phone: bool = False,
) -> dict[str, StepResult]:
    """For each preset (name -> URL query), `steps` Tokens steps after `warmup`: each step
    waits for the page to be idle (no request in flight for `quiet_ms`) before the next.
    The page asks `cache-control: no-cache`: every step is computed, even by a server that
    keeps answers (the steps go back and forth between two values of T)."""
    from playwright.sync_api import Request

    results: dict[str, StepResult] = {}
    control, event = STEP_KINDS[kind]
    with _page(viewport, phone) as page:
        page.context.set_extra_http_headers({"cache-control": "no-cache"})
        inflight: set[Request] = set()
        seen: list[Request] = []

        def started(r: Request) -> None:
            if "/api/" in r.url:
                inflight.add(r)
                seen.append(r)

        page.on("request", started)
        page.on("requestfinished", lambda r: inflight.discard(r))
        page.on("requestfailed", lambda r: inflight.discard(r))

        def idle(timeout_s: float = 120.0) -> None:
            deadline = time.monotonic() + timeout_s
            quiet_since = time.monotonic()
            while time.monotonic() < deadline:
                page.wait_for_timeout(50)
                if inflight:
                    quiet_since = time.monotonic()
                elif (time.monotonic() - quiet_since) * 1000 >= quiet_ms:
                    return
            raise RuntimeError(f"the page kept requesting for {timeout_s:g} s")

        for name, query in presets.items():
            page.goto(f"{base}/?{query}" if query else f"{base}/")
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            idle()
            if phone:  # the flow is below the controls on a phone: the student scrolls to it
                page.locator("#plot-hidden").scroll_into_view_if_needed()
                idle()
            start = int(page.locator(f"#{control}").input_value())
            out: dict[str, list[float]] = {
                "visible": [],
                "last": [],
                "bytes": [],
                "n": [],
                "charts": [],
            }
            mix: list[dict[str, object]] = []
            for i in range(warmup + steps):
                seen.clear()
                value = _step_value(start, i) if kind == "tokens" else start + (i + 1) % 2
                page.evaluate(_STEP_START_JS, [value, control, event])
                idle()
                got = page.evaluate(_STEP_END_JS)
                if i < warmup:
                    continue
                if not mix:
                    mix = [
                        {
                            "method": r.method,
                            "path": "/" + r.url.split("/", 3)[3],
                            "body": r.post_data_json if r.method == "POST" else None,
                        }
                        for r in seen
                    ]
                out["visible"].append(float(got["visible_ms"] or float("nan")))
                out["last"].append(float(got["last_request_ms"] or float("nan")))
                out["bytes"].append(float(got["bytes"]))
                out["n"].append(float(got["requests"]))
                out["charts"].append(float(got["charts_visible"]))
            # Plotly's floor once the steps are done: right after the page opened, its own
            # start-up work (charts drawn as they come into sight) shared the main thread.
            floor = float(page.evaluate(_FLOOR_JS))
            results[name] = StepResult(
                out["visible"],
                out["last"],
                [int(b) for b in out["bytes"]],
                [int(n) for n in out["n"]],
                floor,
                mix,
                [int(c) for c in out["charts"]],
            )
    return results


def capture_mix(out: Path, query: str = "", steps: int = 1) -> list[dict[str, object]]:
    """Capture the request mix of one Tokens step of the page (as it opens, or at the
    preset in `query`) on a fresh server, and write it to `out` as JSON."""
    import json

    from benchmarks.server import Server

    with Server() as server:
        result = measure_steps(server.base, {"page": query}, steps)["page"]
    out.write_text(json.dumps(result.mix, indent=1) + "\n", encoding="utf-8")
    return result.mix


if __name__ == "__main__":
    import sys

    target = Path(__file__).with_name("step_mix.json")
    mix = capture_mix(target, sys.argv[1] if len(sys.argv) > 1 else "")
    print(f"{len(mix)} requests per step -> {target}")
