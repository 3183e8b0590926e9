"""Requests and bytes per Tokens-slider keyboard step, per preset, in headless Chromium.

The page at 1280x720 as it opens (all views, scrolled to the top); one keyboard step of the
Tokens slider (ArrowLeft, then back with ArrowRight, alternating); counted from the Resource
Timing entries of /api/ requests the step made (encodedBodySize: the answer's bytes as
sent; no compression on loopback). Waits for the forward answer to be drawn and for every
view in sight to settle (body data-busy = 0). Median of `--steps` steps after one warm-up.

    python -m benchmarks.page_requests                 # this checkout
    python -m benchmarks.page_requests --root /work/main  # another checkout (before/after)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.serverproc import free_port

PRESETS = {
    "default 16->64": "/",
    "Transformer-base": "/?preset=transformer-base",
    "BERT-base": "/?preset=bert-base",
    "LLaMA-7B": "/?preset=llama-7b",
}

_STEP_JS = """
async (key) => {
  performance.clearResourceTimings();
  window.__ffnKey = key;
}
"""
_READ_JS = """
() => performance.getEntriesByType('resource')
  .filter((e) => e.name.includes('/api/'))
  .map((e) => ({ name: new URL(e.name).pathname, bytes: e.encodedBodySize, end: e.responseEnd }))
"""
# Settled: the old page waits for both seqs (it requests everything); the new one sets data-busy.
_SETTLED = """(before) => document.body.dataset.forwardSeq !== before
  && (document.body.dataset.busy === undefined
      ? document.body.dataset.perturbSeq !== window.__ffnPerturb
      : document.body.dataset.busy === '0')"""


def start(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("server did not start")


def measure(base: str, steps: int) -> dict[str, tuple[float, float, list[str]]]:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, path in PRESETS.items():
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                page = context.new_page()
                page.goto(base + path)
                page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=120_000)
                page.wait_for_timeout(3000)  # the old page has no busy flag: let it finish
                counts, sizes, names = [], [], []
                for i in range(steps + 1):
                    before = page.locator("body").get_attribute("data-forward-seq")
                    page.evaluate(
                        "() => { window.__ffnPerturb = document.body.dataset.perturbSeq; }"
                    )
                    page.evaluate(_STEP_JS, "")
                    page.locator("#tokens").focus()
                    page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
                    page.wait_for_function(_SETTLED, arg=before, timeout=120_000)
                    # teaching panels of the old page finish after the core: wait for quiet
                    last = -1
                    while True:
                        entries = page.evaluate(_READ_JS)
                        if len(entries) == last:
                            break
                        last = len(entries)
                        page.wait_for_timeout(1500)
                    if i == 0:
                        continue
                    counts.append(len(entries))
                    sizes.append(sum(e["bytes"] for e in entries))
                    names = sorted(e["name"] for e in entries)
                out[name] = (statistics.median(counts), statistics.median(sizes), names)
                context.close()
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    proc, base = start(args.root)
    try:
        results = measure(base, args.steps)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    print(f"checkout {args.root}; 1280x720, page as it opens; median of {args.steps} steps")
    print(f"{'preset':<18} {'requests/step':>13} {'bytes/step':>12}  endpoints")
    for name, (count, size, names) in results.items():
        print(f"{name:<18} {count:>13g} {size / 1e6:>10.3f} MB  {', '.join(names)}")


if __name__ == "__main__":
    main()
