"""Where the browser's time goes: a Chrome CPU profile (CDP Profiler) of slider steps, or a
trace of a dragged slider.

    python -m benchmarks.profile_browser --size 8,64,256 --steps 10
    python -m benchmarks.profile_browser --opens --kind seed --window 1920x1080 --steps 20
    python -m benchmarks.profile_browser --drag

Prints the functions with the most self time, grouped by script, during `steps` moves of
the tokens slider (the same step as benchmarks.browser measures), or of the input seed
(`--kind seed`: new values, same shapes), at `--size` or on the page as it opens
(`--opens`), in a `--window` of 1280x720 by default; then the page's own functions
(static/js) by inclusive time per step: which chart's drawing costs what (with
`--plotly-source`, Plotly's entry points beside them).

`--drag`: a Chrome trace of one drag of the Tokens slider (`benchmarks.drag`, the page as it
opens at 1280x720) and, per value drawn, the renderer's main-thread time by trace event
(self time: style, layout, paint; a task's own time, RunTask, is mostly its scripts), the
layouts by what forced them (the top of the script stack, or "(frame)" for the frame's
own) and the boxes the frame's layouts found dirty.

The server runs with `FFN_LAB_PAGE_SCRIPT=modules`: the page loads its ES modules rather
than their one-file bundle, so that a function is named with its module and line
(`heatmap.js:74`). Steps and drags run the same code either way.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.browser import _STEP_JS, CHROMIUM, CHROMIUM_ARGS
from benchmarks.server import Server

MODULES = {"FFN_LAB_PAGE_SCRIPT": "modules"}
"""The page's scripts as their modules: profiles name each function's module."""


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


PLOTLY_CALLS = {"react", "restyle", "relayout", "newPlot", "_doPlot"}
"""plotly.js's entry points, counted beside the page's functions when Plotly's functions have
names (`--plotly-source`)."""


def page_inclusive(profile: dict[str, Any]) -> Counter[str]:
    """Milliseconds per 'function (module:line)' of the page's own scripts (static/js), and
    per Plotly entry point (PLOTLY_CALLS), inclusive of what they call, in a CDP CPU profile
    (a recursive function counted once per sample)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    out: Counter[str] = Counter()
    deltas = profile.get("timeDeltas", [])
    for sample, delta in zip(profile.get("samples", []), deltas, strict=False):
        seen: set[str] = set()
        node: int | None = sample
        while node is not None:
            frame = nodes[node]["callFrame"]
            url = frame.get("url", "")
            name = frame.get("functionName") or "(anonymous)"
            key = ""
            if "/static/" in url:
                key = f"{name} ({url.rsplit('/', 1)[-1]}:{frame.get('lineNumber', 0) + 1})"
            elif "plotly" in url and name in PLOTLY_CALLS:
                key = f"Plotly.{name}"
            if key and key not in seen:
                seen.add(key)
                out[key] += delta / 1000.0
            node = parent.get(node)
    return out


# Runs in the page: one step of the input seed (s -> s + 1: new values, same shapes), resolved
# when its answer is drawn, nothing is busy and two frames have passed.
_SEED_STEP_JS = """
async () => {
  const body = document.body;
  const before = body.dataset.forwardSeq;
  const seed = document.getElementById('input_seed');
  seed.value = String(Number(seed.value) + 1);
  seed.dispatchEvent(new Event('change', { bubbles: true }));
  await new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (body.dataset.forwardSeq !== before && body.dataset.busy === '0') {
        observer.disconnect();
        resolve();
      }
    });
    observer.observe(body, { attributes: true });
  });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
}
"""


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

    with Server(MODULES) as server, _page((1280, 720)) as page:
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
    parser.add_argument("--kind", default="tokens", choices=["tokens", "seed"])
    parser.add_argument("--opens", action="store_true", help="the page as it opens")
    parser.add_argument("--window", default="1280x720", help="the window, e.g. 1920x1080")
    parser.add_argument(
        "--plotly-source",
        type=Path,
        help="the page's plotly.js unminified (node scripts/build-plotly.mjs --unminified "
        "OUT.js), served in place of the minified bundle so that Plotly's functions have names",
    )
    args = parser.parse_args()
    if args.drag:
        drag_trace(args.top)
        return
    tokens, d_model, d_ff = (int(v) for v in args.size.split(","))
    width, height = (int(v) for v in args.window.split("x"))
    from playwright.sync_api import sync_playwright

    with Server(MODULES) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        if args.plotly_source:
            source = args.plotly_source.read_text(encoding="utf-8")
            page.route(
                "**/vendor/plotly*",
                lambda route: route.fulfill(body=source, content_type="text/javascript"),
            )
        query = "" if args.opens else f"?d_model={d_model}&d_ff={d_ff}&tokens={tokens}"
        page.goto(f"{server.base}/{query}")
        page.locator("body[data-forward-seq][data-perturb-seq]").wait_for(state="attached")
        tokens = int(page.locator("#tokens").input_value())

        def step(i: int) -> float | None:
            if args.kind == "seed":
                page.evaluate(_SEED_STEP_JS)
                return None
            return float(page.evaluate(_STEP_JS, tokens if i % 2 == 0 else tokens - 1)["afterplot"])

        step(1)
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        times = [step(i) for i in range(args.steps)]
        profile = cdp.send("Profiler.stop")["profile"]
        browser.close()
    by_function = self_times(profile)
    by_script: Counter[str] = Counter()
    for key, value in by_function.items():
        by_script[key.rsplit("(", 1)[-1].split(":")[0]] += value
    if args.kind == "tokens":
        print(f"input -> afterplot ms: {[round(t or 0) for t in times]}")
    print("self time per script (ms, all steps):")
    for key, value in by_script.most_common(10):
        print(f"  {value:8.1f}  {key}")
    print("self time per function (ms, all steps):")
    for key, value in by_function.most_common(args.top):
        print(f"  {value:8.1f}  {key}")
    print("the page's functions and Plotly's entry points, inclusive (ms per step):")
    for key, value in page_inclusive(profile).most_common(args.top):
        print(f"  {value / args.steps:8.2f}  {key}")


if __name__ == "__main__":
    main()
