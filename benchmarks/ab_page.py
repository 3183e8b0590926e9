"""Two checkouts' pages in one run: the slider-step figures, alternating.

    git worktree add /tmp/before <rev>
    python -m benchmarks.ab_page --before /tmp/before            # this checkout is "after"
    python -m benchmarks.ab_page --before /tmp/before --rounds 4 --steps 9

A front-end change moves the redraw by a few ms, while this machine's background load moves
Plotly's floor per call by ~10 ms between runs (23-35 ms). So the two pages are measured in
the same run, on two servers started side by side (the idle one costs nothing), in
`--rounds` alternating rounds of `--steps` Tokens steps per preset
(`benchmarks.browser.measure_steps`: input event -> last `plotly_afterplot` of a chart in
the viewport, 1280x720 or `--size`, the page as it opens). Prints, per preset and page,
the median over all rounds of the visible redraw and of the step's last request, with
Plotly's floor per call measured in the same rounds beside them.

`--first-flow`: instead, a phone's first flow (390x844, touch, scale 3, Chromium's CPU
slowdown 4x; `benchmarks.page_load.phone_first_flow`, each load in a fresh context), one
load per page per round, the order alternating; each server answers one load before the
rounds (a warm server, as in a lecture).

`--phone`: the steps on a phone (390x844, touch, scale 3, Chromium's CPU slowdown 4x, the
flow scrolled into view; `benchmarks.browser.measure_steps` as `benchmarks.page` runs it).

`--drag`: instead, a dragged Tokens slider (`benchmarks.drag`, the page as it opens at
`--size`), one drag per page per round, the order alternating: values shown per two frames.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.browser import PAGE_PRESETS, STEP_KINDS, measure_steps
from benchmarks.client import percentile
from benchmarks.server import COMPUTED
from tests.serverproc import start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=9)
    parser.add_argument("--presets", default=",".join(PAGE_PRESETS))
    parser.add_argument("--kind", default="tokens", choices=sorted(STEP_KINDS))
    parser.add_argument("--size", default="1280x720", help="the window, e.g. 1920x1080")
    parser.add_argument("--first-flow", action="store_true", help="a phone's first flow")
    parser.add_argument("--drag", action="store_true", help="a dragged Tokens slider")
    parser.add_argument("--phone", action="store_true", help="the steps on a phone, 4x CPU")
    args = parser.parse_args()
    if args.first_flow:
        first_flow(args.before, args.after, args.rounds)
        return
    if args.drag:
        width, height = (int(v) for v in args.size.split("x"))
        drags(args.before, args.after, args.rounds, (width, height))
        return
    presets = {name: PAGE_PRESETS[name] for name in args.presets.split(",")}
    width, height = (int(v) for v in args.size.split("x"))
    viewport = (390, 844) if args.phone else (width, height)
    servers = {
        "before": start_server(COMPUTED, root=args.before),
        "after": start_server(COMPUTED, root=args.after),
    }
    figures: dict[tuple[str, str], dict[str, list[float]]] = {}
    try:
        for _ in range(args.rounds):
            for page, (_, base) in servers.items():
                found = measure_steps(
                    base, presets, args.steps, kind=args.kind, viewport=viewport, phone=args.phone
                )
                for name, result in found.items():
                    got = figures.setdefault((name, page), {"visible": [], "last": [], "floor": []})
                    got["visible"] += result.visible_ms
                    got["last"] += result.last_request_ms
                    got["floor"].append(result.plotly_floor_ms)
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    print(
        f"before {args.before}, after {args.after}; {args.rounds} alternating rounds x "
        f"{args.steps} {args.kind} steps per preset at "
        f"{'a phone (390x844, CPU 4x)' if args.phone else args.size}; medians (ms); "
        "1 frame = 16.7 ms"
    )
    print(f"{'preset':<17} {'page':<7} {'visible redrawn':>16} {'last request':>13} {'floor':>6}")
    for name in presets:
        for page in servers:
            got = figures[(name, page)]
            print(
                f"{name:<17} {page:<7} {percentile(got['visible'], 50):>16.0f} "
                f"{percentile(got['last'], 50):>13.0f} {percentile(got['floor'], 50):>6.1f}"
            )


def first_flow(before: Path, after: Path, rounds: int) -> None:
    """Seconds from navigation to the first flow drawn on a phone, the pages alternating."""
    from playwright.sync_api import sync_playwright

    from benchmarks.page_load import phone_first_flow
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    servers = {"before": start_server(root=before), "after": start_server(root=after)}
    got: dict[str, list[float]] = {page: [] for page in servers}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for _, base in servers.values():
                    phone_first_flow(browser, base, 1)
                for i in range(rounds):
                    order = list(servers.items())
                    for page, (_, base) in order if i % 2 == 0 else reversed(order):
                        got[page] += phone_first_flow(browser, base, 1)
            finally:
                browser.close()
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    print(f"before {before}, after {after}; a phone's first flow, {rounds} alternating rounds")
    for page, times in got.items():
        each = ", ".join(f"{t:.2f}" for t in times)
        print(f"{page:<7} median {percentile(times, 50):.2f} s  ({each})")


def drags(before: Path, after: Path, rounds: int, viewport: tuple[int, int]) -> None:
    """Values shown per two frames of a dragged Tokens slider, the pages alternating."""
    from benchmarks.drag import measure_drag

    servers = {
        "before": start_server(COMPUTED, root=before),
        "after": start_server(COMPUTED, root=after),
    }
    got: dict[str, list[float]] = {page: [] for page in servers}
    notes: dict[str, list[str]] = {page: [] for page in servers}
    try:
        for i in range(rounds):
            order = list(servers.items())
            for page, (_, base) in order if i % 2 == 0 else reversed(order):
                drag = measure_drag(base, viewport=viewport)
                got[page].append(drag.per_two_frames)
                notes[page].append(
                    f"{drag.shown_during}/{drag.drawn_during} in {drag.drag_ms / 1000:.2f} s, "
                    f"{drag.requests} req, last {drag.last_rows}/{drag.let_go}"
                )
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    print(f"before {before}, after {after}; a dragged Tokens slider, {rounds} alternating rounds")
    print("values shown per 2 frames (>= 1: every other frame's value); shown/drawn, requests")
    for page, values in got.items():
        each = "; ".join(notes[page])
        print(f"{page:<7} median {percentile(values, 50):.2f}  ({each})")


if __name__ == "__main__":
    main()
