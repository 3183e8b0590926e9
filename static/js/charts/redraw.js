// Redraw only what is needed: unchanged charts are skipped, off-screen ones deferred until
// they scroll into view (a first picture out of sight is drawn soon after those in sight),
// and a container that changes size is drawn again at its new size.
import { currentFontScale, forgetSizes, rootScale, sizeOf } from "./common.js";

const visible = new WeakMap(); // container -> on screen (or near it), from the observer
const waiting = new Map(); // container -> the latest deferred draw
const observer = typeof IntersectionObserver === "function"
  ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      visible.set(entry.target, entry.isIntersecting);
      const draw = entry.isIntersecting && waiting.get(entry.target);
      if (draw) {
        waiting.delete(entry.target);
        draw();
      }
    }
  }, { rootMargin: "0px" })
  : null;

// A container that changes size (window, "larger text", a panel appearing, the gated flow
// wrapping) is drawn again at its new size: tick density and wrapped titles depend on it.
const resized = new Set();
let resizeFrame = 0;
const resizer = typeof ResizeObserver === "function"
  ? new ResizeObserver((entries) => {
    forgetSizes(); // sizes read earlier in this frame are from before the change
    for (const entry of entries) {
      const el = /** @type {HTMLElement} */ (entry.target);
      const last = el.ffnLast;
      if (!last || el.offsetParent === null) continue;
      const { w, h } = sizeOf(el);
      if (Math.abs(last.w - w) > 1 || Math.abs(last.h - h) > 1) resized.add(el);
    }
    if (resized.size && !resizeFrame) {
      resizeFrame = requestAnimationFrame(() => {
        resizeFrame = 0;
        const els = [...resized];
        resized.clear();
        // A chart with a newer answer waiting to scroll into view keeps it: that draw reads
        // the new size when it runs, while the last drawn one would put the old answer back.
        for (const el of els) if (!waiting.has(el)) whenVisible(el, el.ffnLast.draw);
      });
    }
  })
  : null;

/**
 * Empty `el` (a view with no picture for this answer, e.g. a map over the work limit): its
 * previous picture must not stay on screen as if it were this answer's.
 */
export function clearChart(el) {
  waiting.delete(el);
  unmarkWaiting(el);
  el.ffnDrawn = null;
  el.ffnLast = null;
  if (typeof Plotly !== "undefined") Plotly.purge(el);
  el.replaceChildren();
  el.parentElement?.removeAttribute("data-drawn"); // no export of nothing (app.css)
}

/**
 * False when `el` is known to be out of sight (its next picture waits until it scrolls into
 * view): reading its size now would only make the browser lay the page out for nothing.
 */
export function inSight(el) {
  return !observer || visible.get(el) !== false;
}

/** Draw every deferred chart now (before printing or exporting the whole page). */
export function drawDeferred() {
  const draws = [...waiting.values()];
  waiting.clear();
  return Promise.all(draws.map((draw) => draw()));
}
if (typeof window !== "undefined") window.addEventListener("beforeprint", () => { drawDeferred(); });

/** True when `el` is laid out but entirely outside the viewport (below the fold on a
 * phone). A container not laid out (a hidden panel) counts as in sight: drawn at once, as
 * before it is shown. */
function outOfSight(el) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false;
  return r.bottom < 0 || r.top > window.innerHeight || r.right < 0 || r.left > window.innerWidth;
}

// A chart's first picture when it is out of sight is drawn soon, not now: one chart per task
// in the order asked, after those in sight, so that the first answer's charts in sight (and
// the page's response to a touch) do not wait for every chart below them. Each caller's
// promise resolves when its chart has been drawn (its latest draw: `waiting` holds it), or
// drawn meanwhile because it scrolled into view, or cleared.
const backlog = new Map(); // container -> resolvers of the promises handed out for it
let draining = false;

/** Queue `el`'s first draw (its draw is in `waiting`); resolves when it has run. */
function drawSoon(el) {
  const promise = new Promise((resolve, reject) => {
    const list = backlog.get(el) || [];
    list.push({ resolve, reject });
    backlog.set(el, list);
  });
  if (!draining) {
    draining = true;
    setTimeout(drainOne, 0);
  }
  return promise;
}

function drainOne() {
  const next = backlog.entries().next();
  if (next.done) {
    draining = false;
    return;
  }
  const [el, list] = next.value;
  backlog.delete(el);
  const draw = waiting.get(el);
  waiting.delete(el);
  new Promise((resolve) => { resolve(draw ? draw() : el); }).then(
    () => { for (const r of list) r.resolve(el); },
    (err) => { for (const r of list) r.reject(err); },
  ).finally(() => setTimeout(drainOne, 0));
}

/**
 * Run `draw()` now when `el` is on screen (or has never been drawn); else keep it until `el`
 * scrolls into view: a Plotly.react costs ~10 ms per chart, and charts nobody can see
 * should not delay the ones they can. The container's data-* attributes are set by the
 * caller at once either way.
 */
export function whenVisible(el, drawNow) {
  const draw = () => {
    const { w, h } = sizeOf(el);
    el.ffnLast = { draw: drawNow, w, h }; // drawn again when the container's size changes
    if (resizer && !el.ffnSized) {
      el.ffnSized = true;
      resizer.observe(el);
    }
    const drawn = drawNow();
    // the newer picture is drawn: the chart is no longer marked (unless a newer one waits)
    Promise.resolve(drawn).finally(() => { if (!waiting.has(el)) unmarkWaiting(el); });
    return drawn;
  };
  if (!observer) return draw();
  if (!visible.has(el)) {
    observer.observe(el);
    if (!outOfSight(el)) {
      visible.set(el, true);
      return draw();
    }
    visible.set(el, false); // the observer's first report follows
    waiting.set(el, draw);
    return drawSoon(el);
  }
  if (visible.get(el)) {
    waiting.delete(el);
    return draw();
  }
  waiting.set(el, draw);
  // out of sight, its picture is of an older answer until it scrolls into view: dimmed
  // (static/css/live.css), so that scrolling to it never shows that picture as this answer's
  if (el.ffnLast && !el.hasAttribute("data-waiting")) el.setAttribute("data-waiting", "");
  return Promise.resolve(el);
}

function unmarkWaiting(el) {
  if (el.hasAttribute("data-waiting")) el.removeAttribute("data-waiting");
}

/**
 * True when `el` already shows exactly this data with these options at this size, so that
 * a redraw can be skipped (a Plotly.react costs ~10 ms per chart even when nothing
 * changed). `data` is compared by identity, `opts` by value (functions ignored).
 */
export function unchanged(el, data, opts) {
  // A chart out of sight is compared at the size it was last drawn at: reading its size now
  // would lay the page out again after the charts just drawn, for nothing. Its next draw
  // reads the new size, and a resize meanwhile queues a redraw of its own (resizer above).
  const { w, h } = !inSight(el) && el.ffnLast ? el.ffnLast : sizeOf(el);
  const key = JSON.stringify([opts, currentFontScale(), rootScale(), w, h]); // a new size or font redraws
  if (el.ffnDrawn && el.ffnDrawn.data === data && el.ffnDrawn.key === key) return true;
  el.ffnDrawn = { data, key };
  return false;
}
