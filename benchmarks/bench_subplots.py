"""The flow as four figures or as one figure with four subplots: what one redraw costs.

    python -m benchmarks.bench_subplots                 # 6 alternating rounds x 15 draws
    python -m benchmarks.bench_subplots --rounds 10 --draws 21

Would drawing the flow (input, pre-activation, hidden, output) as
one Plotly figure with subplots be cheaper than four `Plotly.react` calls? This draws
the default page's shapes (T 6: [6, 16], [6, 64], [6, 64], [6, 16], heatmaps on the page's
diverging scale, colour bars on the two middle ones, axis titles with automargin) both ways
in headless Chromium at 1280x720, with fresh numbers every draw, in alternating rounds,
and prints the median time per redraw (call until its promise resolves) of each and their
ratio. Only Plotly is on the page (no FFN Lab code), so this is Plotly's own cost.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import plotly

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"

_PAGE = """<!doctype html><html><body style="margin:0">
<div id="a" style="width:190px;height:270px;display:inline-block"></div>
<div id="b" style="width:300px;height:270px;display:inline-block"></div>
<div id="c" style="width:300px;height:270px;display:inline-block"></div>
<div id="d" style="width:190px;height:270px;display:inline-block"></div>
<div id="one" style="width:980px;height:270px"></div></body></html>"""

# Runs in the page: defines window.draw(kind, n) -> median ms per redraw.
_SETUP_JS = """
() => {
  const scale = [[0, "#2166ac"], [0.5, "#f7f7f7"], [1, "#b2182b"]];
  const shapes = [[6, 16], [6, 64], [6, 64], [6, 16]];
  const widths = [190, 300, 300, 190];
  const titles = ["Input x", "Pre-activation x W1 + b1", "Hidden act(.)", "Output"];
  const xTitles = ["feature (d_model)", "hidden unit (d_ff)", "hidden unit (d_ff)",
    "feature (d_model)"];
  const matrix = ([t, n], s) => Array.from({ length: t }, (_, i) =>
    Array.from({ length: n }, (_, j) => Math.sin(i * 7.1 + j * 3.3 + s)));
  const config = { displayModeBar: false };
  function four(s) {
    return Promise.all(["a", "b", "c", "d"].map((id, k) => Plotly.react(id, [{
      type: "heatmap", z: matrix(shapes[k], s), colorscale: scale, zmid: 0,
      showscale: k === 1 || k === 2,
    }], {
      width: widths[k], height: 270, margin: { l: 8, r: 8, t: 8, b: 8 },
      title: { text: titles[k], automargin: true },
      xaxis: { automargin: true, title: { text: xTitles[k] } },
      yaxis: { automargin: true, autorange: "reversed",
        title: { text: k ? "" : "position (token)" } },
    }, config)));
  }
  const domains = [[0, 0.17], [0.22, 0.47], [0.55, 0.80], [0.85, 1]];
  function one(s) {
    const traces = shapes.map((shape, k) => {
      const n = k ? String(k + 1) : "";
      return { type: "heatmap", z: matrix(shape, s), colorscale: scale, zmid: 0,
        xaxis: "x" + n, yaxis: "y" + n, showscale: k === 1 || k === 2,
        colorbar: { x: domains[k][1] + 0.005, len: 0.8 } };
    });
    const layout = { width: 980, height: 270, margin: { l: 8, r: 8, t: 30, b: 8 },
      annotations: [] };
    domains.forEach((domain, k) => {
      const n = k ? String(k + 1) : "";
      layout["xaxis" + n] = { domain, anchor: "y" + n, automargin: true,
        title: { text: xTitles[k] } };
      layout["yaxis" + n] = { anchor: "x" + n, automargin: true, autorange: "reversed",
        title: { text: k ? "" : "position (token)" } };
      layout.annotations.push({ text: titles[k], xref: "x" + n + " domain", yref: "paper",
        x: 0.5, y: 1.02, yanchor: "bottom", showarrow: false });
    });
    return Plotly.react("one", traces, layout, config);
  }
  let seed = 0;
  window.draw = async (kind, n) => {
    const f = kind === "four" ? four : one;
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const t0 = performance.now();
      await f(seed += 1);
      times.push(performance.now() - t0);
      await new Promise((r) => requestAnimationFrame(() => r()));
    }
    times.sort((x, y) => x - y);
    return times[times.length >> 1];
  };
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--draws", type=int, default=15)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    got: dict[str, list[float]] = {"four": [], "one": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_content(_PAGE)
        page.add_script_tag(path=str(PLOTLY_JS))
        page.evaluate(_SETUP_JS)
        for kind in got:  # warm-up: the first draws compile and lay out everything
            page.evaluate("([k, n]) => draw(k, n)", [kind, 5])
        for _ in range(args.rounds):
            for kind in got:
                got[kind].append(float(page.evaluate("([k, n]) => draw(k, n)", [kind, args.draws])))
        browser.close()
    four = statistics.median(got["four"])
    one = statistics.median(got["one"])
    print(
        f"{args.rounds} alternating rounds x {args.draws} redraws, median of the rounds' medians "
        f"(ms per redraw; 1 frame = 16.7 ms)"
    )
    print(f"four figures, four Plotly.react: {four:6.1f} ms  (rounds: {_fmt(got['four'])})")
    print(f"one figure, four subplots:       {one:6.1f} ms  (rounds: {_fmt(got['one'])})")
    print(f"one ÷ four: {one / four:.2f}")


def _fmt(values: list[float]) -> str:
    return " ".join(f"{v:.1f}" for v in values)


if __name__ == "__main__":
    main()
