"""Where the browser's time goes: a Chrome CPU profile (CDP Profiler) of slider steps.

    python -m benchmarks.profile_browser --size 8,64,256 --steps 10

Prints the functions with the most self time, grouped by script, during `steps` moves of
the tokens slider (the same step as benchmarks.browser measures).
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from benchmarks.browser import _STEP_JS, CHROMIUM, CHROMIUM_ARGS
from benchmarks.server import Server


def self_times(profile: dict[str, Any]) -> Counter[str]:
    """Milliseconds of self time per 'function (script:line)' in a CDP CPU profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    out: Counter[str] = Counter()
    deltas = profile.get("timeDeltas", [])
    for sample, delta in zip(profile.get("samples", []), deltas, strict=False):
        frame = nodes[sample]["callFrame"]
        script = frame.get("url", "").rsplit("/", 1)[-1] or "(native)"
        name = frame.get("functionName") or "(anonymous)"
        out[f"{name} ({script}:{frame.get('lineNumber', 0) + 1})"] += delta / 1000.0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="8,64,256", help="T,d_model,d_ff")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    tokens, d_model, d_ff = (int(v) for v in args.size.split(","))
    from playwright.sync_api import sync_playwright

    with Server() as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 720}, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{server.base}/?d_model={d_model}&d_ff={d_ff}&tokens={tokens}")
        page.locator("body[data-forward-seq][data-perturb-seq]").wait_for(state="attached")
        page.evaluate(_STEP_JS, tokens - 1)
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        times = []
        for i in range(args.steps):
            out = page.evaluate(_STEP_JS, tokens if i % 2 == 0 else tokens - 1)
            times.append(out["afterplot"])
        profile = cdp.send("Profiler.stop")["profile"]
        browser.close()
    by_function = self_times(profile)
    by_script: Counter[str] = Counter()
    for key, value in by_function.items():
        by_script[key.rsplit("(", 1)[-1].split(":")[0]] += value
    print(f"input -> afterplot ms: {[round(t) for t in times]}")
    print("self time per script (ms, all steps):")
    for key, value in by_script.most_common(10):
        print(f"  {value:8.1f}  {key}")
    print("self time per function (ms, all steps):")
    for key, value in by_function.most_common(args.top):
        print(f"  {value:8.1f}  {key}")


if __name__ == "__main__":
    main()
