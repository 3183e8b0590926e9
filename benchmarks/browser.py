"""Slider input -> plotly_afterplot in headless Chromium (Debian's, through Playwright).

One sample: the page is idle and fully drawn; the script moves the `tokens` slider one
step (T <-> T-1), dispatches the slider's `input` event, and waits until the forward answer
is drawn (body data-forward-seq advances) and no view in sight waits for an answer (body
data-busy is 0; views out of sight are not requested, static/js/live.js). The time is from
the input event to the last `plotly_afterplot` event any chart fired; the network part
(fetch start to response end of /api/forward, from Resource Timing) is reported next to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.client import percentile
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # one definition of the flags

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


def measure_sliders(
    base: str, sizes: dict[str, tuple[int, int, int]], steps: int, warmup: int = 2
) -> dict[str, BrowserResult]:
    """For each size name -> (T, d_model, d_ff), `steps` slider steps after `warmup` ones."""
    from playwright.sync_api import sync_playwright

    results: dict[str, BrowserResult] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": 1280, "height": 720}, locale="en-US", bypass_csp=True
            )
            page = context.new_page()
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
                    value = tokens - 1 if i % 2 == 0 else tokens
                    if tokens == 1:
                        value = 2 if i % 2 == 0 else 1
                    out = page.evaluate(_STEP_JS, value)
                    if i >= warmup:
                        afterplot.append(float(out["afterplot"]))
                        network.append(float(out["net"]))
                        charts.append(int(out["charts"]))
                results[name] = BrowserResult(afterplot, network, charts, floor)
            context.close()
        finally:
            browser.close()
    return results
