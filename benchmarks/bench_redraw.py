"""What one heatmap redraw costs in headless Chromium, against Plotly's floor per call.

    python -m benchmarks.bench_redraw            # default, Transformer-base, LLaMA-7B
    python -m benchmarks.bench_redraw --repeat 31

For each preset the page is opened at 1280x720
and, on the drawn #plot-hidden, timed (median of --repeat runs, one run each):

- floor: `Plotly.react` with the figure it already shows (Plotly's own cost per call; the
  bound every redraw pays; charts.js skips such calls entirely when nothing changed),
- nested: a new z as nested JS arrays (what the page draws: JSON lists from the API),
- typed: the same z as Plotly's typed-array spec {dtype: "f4", bdata: base64, shape},
  encoded in the page (the cost a server-side base64 encoding would remove is JSON.parse
  of the nested lists, timed separately as `parse`).

Prints one line per preset and measure, with the frame budget (16.7 ms) beside it.
"""

from __future__ import annotations

import argparse

from benchmarks.server import COMPUTED
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.serverproc import start_server, stop_server

PRESETS = {
    "default": "",
    "transformer-base": "preset=transformer-base",
    "llama-7b": "preset=llama-7b",
}
FRAME_MS = 1000 / 60

MEASURE = """async (repeat) => {
  const el = document.getElementById('plot-hidden');
  const trace = el.data[0];
  const layout = el.layout;
  const rows = trace.z.length, cols = trace.z[0].length;
  const fresh = () => trace.z.map((r) => r.map((v) => v * (1 + 1e-7 * Math.random())));
  const typed = (z) => {
    const a = new Float32Array(rows * cols);
    z.forEach((r, i) => a.set(r, i * cols));
    const bytes = new Uint8Array(a.buffer);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) {
      s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return { dtype: 'f4', bdata: btoa(s), shape: `${rows},${cols}` };
  };
  const time = async (fn) => {
    const out = [];
    for (let i = 0; i < repeat; i += 1) {
      const t0 = performance.now();
      await fn();
      out.push(performance.now() - t0);
    }
    out.sort((a, b) => a - b);
    return out[Math.floor(out.length / 2)];
  };
  const cfg = el._context;
  const floor = await time(() => Plotly.react(el, el.data, layout, cfg));
  const nested = await time(() => Plotly.react(el, [{ ...trace, z: fresh() }], layout, cfg));
  const encoded = [];
  for (let i = 0; i < repeat; i += 1) encoded.push(typed(fresh()));
  let k = 0;
  const typedMs = await time(
    () => Plotly.react(el, [{ ...trace, z: encoded[k++ % repeat] }], layout, cfg));
  const text = JSON.stringify(fresh());
  const parse = await time(() => { JSON.parse(text); });
  await Plotly.react(el, [trace], layout, cfg);
  return { rows, cols, floor, nested, typed: typedMs, parse };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc, base = start_server(COMPUTED)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for name, query in PRESETS.items():
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"{base}/?{query}")
                page.locator("body[data-forward-seq][data-perturb-seq]").wait_for(
                    state="attached", timeout=180_000
                )
                page.locator("#plot-hidden .main-svg").first.wait_for()
                r = page.evaluate(MEASURE, args.repeat)
                shape = f"[{r['rows']} x {r['cols']}]"
                for key in ("floor", "nested", "typed", "parse"):
                    print(
                        f"{name:17s} hidden {shape:12s} {key:7s} {r[key]:7.2f} ms"
                        f"  (median of {args.repeat}; one frame = {FRAME_MS:.1f} ms)",
                        flush=True,
                    )
                page.close()
            browser.close()
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
