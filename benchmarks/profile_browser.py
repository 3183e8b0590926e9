"""Where the browser's time goes: a Chrome CPU profile (CDP Profiler) of slider steps, or a
trace of a dragged slider.

    python -m benchmarks.profile_browser --size 8,64,256 --steps 10
    python -m benchmarks.profile_browser --drag

Prints the functions with the most self time, grouped by script, during `steps` moves of
the tokens slider (the same step as benchmarks.browser measures).

`--drag`: a Chrome trace of one drag of the Tokens slider (`benchmarks.drag`, the page as it
opens at 1280x720) and, per value drawn, the renderer's main-thread time by trace event
(self time: style, layout, paint; a task's own time, RunTask, is mostly its scripts), the
layouts by what forced them (the top of the script stack, or "(frame)" for the frame's
own) and the boxes the frame's layouts found dirty.
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


def main_thread_events(trace: dict[str, Any] | list[Any]) -> list[dict[str, Any]]:
    """The complete ('X') events of the renderer's main thread, in start order."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"].get("name") == "CrRendererMain"
    }
    out = [e for e in events if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X"]
    return sorted(out, key=lambda e: (e["ts"], -e.get("dur", 0)))


def event_self_ms(events: list[dict[str, Any]]) -> Counter[str]:
    """Self time (ms) per event name: an event's duration less that of the events inside it."""
    out: Counter[str] = Counter()
    stack: list[tuple[int, int, str]] = []
    for e in events:
        start, dur = e["ts"], e.get("dur", 0)
        while stack and stack[-1][0] + stack[-1][1] <= start:
            stack.pop()
        if stack:
            outer = stack[-1]
            out[outer[2]] -= min(dur, outer[0] + outer[1] - start) / 1000.0
        out[e["name"]] += dur / 1000.0
        stack.append((start, dur, e["name"]))
    return out


def forced_layouts(events: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str], list[int]]:
    """Layout and style time (ms) and counts by what asked for them, and the dirty boxes of
    each layout the frame itself ran."""
    ms: Counter[str] = Counter()
    count: Counter[str] = Counter()
    dirty: list[int] = []
    for e in events:
        if e["name"] not in ("Layout", "UpdateLayoutTree"):
            continue
        begin = e.get("args", {}).get("beginData", {})
        stack = begin.get("stackTrace") or []
        if stack:
            top = stack[0]
            where = f"{top.get('functionName') or '?'} ({top.get('url', '').rsplit('/', 1)[-1]})"
        else:
            where = "(frame)"
            if e["name"] == "Layout":
                dirty.append(int(begin.get("dirtyObjects", 0)))
        key = f"{e['name']}: {where}"
        ms[key] += e.get("dur", 0) / 1000.0
        count[key] += 1
    return ms, count, dirty


def drag_trace(top: int) -> None:
    """Trace one drag and print the main thread's time per value drawn (see the module)."""
    import json

    from benchmarks.browser import _page
    from benchmarks.drag import _DRAG_JS

    with Server() as server, _page((1280, 720)) as page:
        page.goto(f"{server.base}/")
        page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=60_000)
        page.wait_for_function("() => document.body.dataset.busy === '0'", timeout=60_000)
        browser = page.context.browser
        if browser is None:
            raise RuntimeError("no browser to trace")
        categories = [
            "devtools.timeline",
            "disabled-by-default-devtools.timeline",
            "disabled-by-default-devtools.timeline.stack",
        ]
        browser.start_tracing(page=page, categories=categories)
        got = page.evaluate(_DRAG_JS, 120)
        trace = json.loads(browser.stop_tracing())
    values = max(1, int(got["drawn"]))
    events = main_thread_events(trace)
    print(
        f"drag: {got['drawn']} values drawn in {got['drag_ms'] / 1000:.2f} s of drag, "
        f"{got['shown_during']} shown; per value drawn (ms):"
    )
    for name, spent in event_self_ms(events).most_common(top):
        print(f"  {spent / values:7.2f}  {name}")
    layout_ms, calls, dirty = forced_layouts(events)
    print("layout and style per value drawn, by what asked (ms, calls):")
    for key, value in layout_ms.most_common(top):
        print(f"  {value / values:7.2f}  {calls[key] / values:5.1f}  {key}")
    if dirty:
        print(f"the frame's layouts: median {sorted(dirty)[len(dirty) // 2]} dirty boxes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="8,64,256", help="T,d_model,d_ff")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--drag", action="store_true", help="trace a dragged Tokens slider")
    args = parser.parse_args()
    if args.drag:
        drag_trace(args.top)
        return
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
