"""A dragged slider: how many of the values it passes are drawn, and that the last one is.

The page (as it opens, or a preset) in headless Chromium; the Tokens slider is held down
(a pointerdown on it, as `static/js/drag.js` watches) and moved to a new value at every
animation frame for `frames` frames, a triangle wave over T = 2..21 (each move changes the
tensors' shapes: the dearer step), then let go. The page marks each drawn answer (the hidden
heatmap's `plotly_afterplot`, its row count = the T drawn) and counts its /api/forward
requests. A value counts as shown when a frame was painted with it: each animation frame
notes which drawn answer the plot holds (what that frame paints), and an answer replaced
before any frame painted it is drawn but not shown.

Figures: values shown per two frames of drag time (>= 1: "at least every other frame's
value"), requests per drawn value (1: no storm; a drag keeps one request in flight), and
whether the value where the pointer let go is the one drawn last.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.browser import _page

_DRAG_JS = """
async (frames) => {
  const slider = document.getElementById('tokens');
  const plot = document.getElementById('plot-hidden');
  const drawn = [];
  const mark = () => drawn.push({ t: performance.now(), rows: plot.data[0].z.length });
  plot.on('plotly_afterplot', mark);
  // the drawn answer each frame paints (rAF callbacks run just before the frame's paint)
  const painted = new Set();
  let sampling = true;
  const sample = () => {
    if (drawn.length) painted.add(drawn.length);
    if (sampling) requestAnimationFrame(sample);
  };
  requestAnimationFrame(sample);
  performance.clearResourceTimings();
  slider.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
  const t0 = performance.now();
  let value = Number(slider.value);
  for (let f = 0; f < frames; f += 1) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const phase = f % 40;
    value = 2 + (phase < 20 ? phase : 39 - phase);
    slider.value = String(value);
    slider.dispatchEvent(new Event('input', { bubbles: true }));
  }
  const released = performance.now();
  const shownDuring = [...painted].filter((n) => n > 0 && drawn[n - 1].t <= released).length;
  slider.dispatchEvent(new PointerEvent('pointerup', { bubbles: true }));
  const body = document.body;
  await new Promise((resolve) => {
    const check = () => {
      const last = drawn[drawn.length - 1];
      if (last && last.rows === value && body.dataset.busy === '0') resolve();
      else setTimeout(check, 20);
    };
    check();
  });
  sampling = false;
  plot.removeListener('plotly_afterplot', mark);
  const requests = performance.getEntriesByType('resource')
    .filter((e) => e.name.endsWith('/api/forward')).length;
  return {
    drag_ms: released - t0,
    drawn_during: drawn.filter((d) => d.t <= released).length,
    shown_during: shownDuring,
    drawn: drawn.length,
    requests,
    last_rows: drawn[drawn.length - 1].rows,
    let_go: value,
  };
}
"""


@dataclass(frozen=True)
class DragResult:
    """One drag: its duration (ms), answers drawn while it lasted, those of them a frame
    painted (shown), answers drawn in all, the /api/forward requests it made, and the T drawn
    last against the T let go at."""

    drag_ms: float
    drawn_during: int
    shown_during: int
    drawn: int
    requests: int
    last_rows: int
    let_go: int

    @property
    def per_two_frames(self) -> float:
        """Values shown (painted) per two 60 Hz frames of drag time."""
        return self.shown_during / (self.drag_ms / (2 * 1000.0 / 60.0))


def measure_drag(
    base: str, query: str = "", frames: int = 120, viewport: tuple[int, int] = (1280, 720)
) -> DragResult:
    """One drag of `frames` animation frames on the page at `query` (see the module)."""
    with _page(viewport) as page:
        page.context.set_extra_http_headers({"cache-control": "no-cache"})
        page.goto(f"{base}/?{query}" if query else f"{base}/")
        page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=60_000)
        page.wait_for_function("() => document.body.dataset.busy === '0'", timeout=60_000)
        got = page.evaluate(_DRAG_JS, frames)
    return DragResult(**got)
