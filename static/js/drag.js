// A slider being dragged (pointer held down on an <input type="range">). While it is, a new
// value does not cancel the request in flight: it waits for that answer (only the newest
// value waits), is requested the moment the answer arrives, and that answer is drawn while
// the server computes the next. So a drag draws one value per answer, the last value always,
// with one request in flight. A key press or a click (not a drag) still replaces the
// request in flight at once (api.js LatestOnly).

let dragging = false;
/** @type {(() => void) | null} what waits for the pointer to let go (the newest only) */
let whenLetGo = null;

if (typeof document !== "undefined") {
  document.addEventListener("pointerdown", (e) => {
    dragging = e.target instanceof HTMLInputElement && e.target.type === "range";
  }, { capture: true, passive: true });
  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, () => {
      dragging = false;
      const run = whenLetGo;
      whenLetGo = null;
      if (run) run();
    }, { capture: true, passive: true });
  }
}

/** True while the pointer holds a slider down. */
export function draggingSlider() {
  return dragging;
}

/**
 * Run `fn` now, or when the pointer lets go of the slider it drags (only the newest `fn`
 * waits). The address bar is written so: Chromium ignores history.replaceState beyond 200
 * calls in 10 s ("Throttling navigation"), which a drag drawing 20 values a second reaches,
 * and each call costs a frame ~2-3 ms of a drag's main thread.
 */
export function afterDrag(fn) {
  if (dragging) whenLetGo = fn;
  else fn();
}

/**
 * One request in flight during a drag: `send(body)` now when nothing is in flight (or no
 * slider is dragged), else keep `body` as the newest waiting one. `answered()` (called when
 * the answer in flight arrives) returns the waiting body to send next, or null.
 */
export class DragQueue {
  constructor() {
    this.inFlight = false;
    this.waiting = null;
  }

  /** True when `body` waits for the answer in flight instead of being sent now. */
  hold(body) {
    if (!this.inFlight || !draggingSlider()) return false;
    this.waiting = body;
    return true;
  }

  sent() {
    this.inFlight = true;
    this.waiting = null;
  }

  answered() {
    this.inFlight = false;
    const next = this.waiting;
    this.waiting = null;
    return next;
  }
}
