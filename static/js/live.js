// Compute what is seen: a view (a <section>) is requested when it is on screen or
// near it, or when it is the one the lesson or the embed shows; the others are marked stale
// and fetched when they scroll into view. While a view's request is pending its plots are
// dimmed under a busy overlay; a refused request says so at the view itself.
import { rootScale } from "./charts/common.js";
import { t } from "./i18n.js";
import { setAttr } from "./dom.js";

/** How far outside the viewport a view still counts as seen (pixels, above and below). */
export const NEAR_PX = 200;

let forced = ""; // section id the lesson or embed shows, always computed
const shown = new Map(); // section -> [fn] called when it scrolls into view
const near = new WeakMap(); // section -> within NEAR_PX of the viewport, from the observer
const observer = typeof IntersectionObserver === "function"
  ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      near.set(entry.target, entry.isIntersecting);
      if (!entry.isIntersecting) continue;
      for (const fn of shown.get(entry.target) || []) fn();
    }
  }, { rootMargin: `${NEAR_PX}px 0px` })
  : null;

/** The section the lesson or embed shows (computed whatever the scroll position). */
export function setForced(id) {
  forced = id || "";
}

/** True when `section` is on screen or within NEAR_PX of it (or is the forced one). */
export function isSeen(section) {
  if (!section) return false;
  if (section.id === forced && !section.hidden) return true;
  if (section.hidden || !observer) return !section.hidden;
  // The observer's answer when it has one (no layout read: a slider step asks for every
  // view, and each getBoundingClientRect after a redraw forces the page's layout).
  if (near.has(section)) return near.get(section);
  const r = section.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false;
  return r.bottom > -NEAR_PX && r.top < window.innerHeight + NEAR_PX;
}

/** Call `fn()` whenever `section` comes into view (or near it). */
export function onShown(section, fn) {
  if (!shown.has(section)) {
    shown.set(section, []);
    observer?.observe(section);
  }
  shown.get(section).push(fn);
}

let measure = null;
const rooms = new Map(); // "label|rem" -> px

/** The width (px) the full busy label needs: its text plus the spinner's room (live.css). */
function textRoom(label) {
  measure ??= document.createElement("canvas").getContext("2d");
  const rem = 16 * rootScale();
  if (!measure) return 12 * rem;
  const key = `${label}|${rem}`;
  if (!rooms.has(key)) {
    measure.font = `600 ${rem}px system-ui, sans-serif`;
    rooms.set(key, measure.measureText(label).width + 2.8 * rem + 8);
  }
  return rooms.get(key);
}

// Plot wrappers' widths, kept by a ResizeObserver: reading clientWidth when a step starts
// (the slider's own changes not laid out yet) forced a layout of the whole page per step.
const widths = new WeakMap(); // wrapper -> its width (px)
const sizer = typeof ResizeObserver === "function"
  ? new ResizeObserver((entries) => {
    // after the frame's layout: reading clientWidth here lays nothing out again
    for (const entry of entries) widths.set(entry.target, /** @type {HTMLElement} */ (entry.target).clientWidth);
  })
  : null;

/** The width of a plot wrapper (px): read once, then kept up to date by the observer. */
function widthOf(wrap) {
  let width = widths.get(wrap);
  if (width === undefined || !sizer) {
    width = wrap.clientWidth;
    widths.set(wrap, width);
    sizer?.observe(wrap);
  }
  return width;
}

/** A wait shorter than this (ms) reads as instant and is not shown (static/css/live.css). */
export const SHOWN_WAIT_MS = 100;
const shownTimers = new WeakMap(); // section -> the timer that shows its wait

/**
 * Mark `section` as waiting for an answer: aria-busy at once; its plots dimmed under the
 * busy overlay (data-busy-now, static/css/live.css) once the wait has lasted 100 ms, or at
 * once with `now` (the caller's last answer took that long, so this one will
 * too, and a second repaint in the middle of the wait would take CPU from the server
 * computing it). Every plot wrapper carries the label. Widths come from a ResizeObserver
 * (no layout read per step); attributes that hold their value are left.
 */
export function setBusy(section, busy, { now = false } = {}) {
  if (!section) return;
  const was = section.getAttribute("aria-busy") === "true";
  if (busy && !was) {
    section.toggleAttribute("data-busy-now", now);
    clearTimeout(shownTimers.get(section));
    if (!now) {
      // still waiting after SHOWN_WAIT_MS: shown (dimmed and labelled, static/css/live.css)
      shownTimers.set(section, setTimeout(() => {
        if (section.getAttribute("aria-busy") === "true") section.setAttribute("data-busy-now", "");
      }, SHOWN_WAIT_MS));
    }
  }
  if (busy) {
    const label = t("status.loading");
    // A label wider than a plot would spill past it: narrow plots get the compact one.
    const room = textRoom(label);
    const wraps = [...section.querySelectorAll(".plot-wrap, .plot")];
    const narrow = wraps.map((wrap) => {
      const width = widthOf(wrap);
      return width > 0 && width < room;
    });
    if (!was) section.setAttribute("aria-busy", "true");
    wraps.forEach((wrap, i) => {
      if (wrap.dataset.busyLabel !== label) wrap.dataset.busyLabel = label;
      if (narrow[i] && wrap.dataset.busyNarrow !== "1") wrap.dataset.busyNarrow = "1";
      else if (!narrow[i] && "busyNarrow" in wrap.dataset) delete wrap.dataset.busyNarrow;
    });
  } else if (was) {
    clearTimeout(shownTimers.get(section));
    section.removeAttribute("aria-busy");
  }
  const count = String(document.querySelectorAll("section[aria-busy='true']").length);
  if (document.body.dataset.busy !== count) document.body.dataset.busy = count;
}

/** Mark `section` stale: it shows an older configuration and will be fetched when seen. */
export function setStale(section, stale) {
  if (!section) return;
  if (stale) setAttr(section, "data-stale", "1");
  else if ("stale" in section.dataset) delete section.dataset.stale;
}

/**
 * Show (message) or clear (null) the refusal at the top of the view's plots: the plots
 * below stay dimmed, as they show the last configuration that could run. `box: false` only
 * dims (a view below another that already says it).
 */
export function showRefused(section, message, { box: withBox = true } = {}) {
  if (!section) return;
  let box = section.querySelector(":scope > .view-refused");
  if (!message || !withBox) box?.remove();
  if (!message) {
    delete section.dataset.refused;
    return;
  }
  section.dataset.refused = "1";
  if (!withBox) return;
  if (!box) {
    box = document.createElement("p");
    box.className = "view-refused";
    box.setAttribute("role", "alert");
    const heading = section.querySelector(":scope > h2");
    if (heading) heading.after(box);
    else section.prepend(box);
  }
  box.textContent = message;
}

/**
 * A view computed from the page state: `request(token)` is called when the view is seen and
 * its inputs changed (`invalidate()`), or when it scrolls into view with changed inputs.
 * `request` returns a promise; the view is busy until the newest request settles.
 * Returns { invalidate(), refresh(), get dirty }.
 */
export function liveView(section, request) {
  let dirty = false;
  let seq = 0;
  async function refresh() {
    dirty = false;
    setStale(section, false);
    const mine = ++seq;
    const pending = request(); // sent before the busy mark reads the layout
    setBusy(section, true);
    try {
      await pending;
    } finally {
      if (mine === seq) setBusy(section, false);
    }
  }
  function invalidate({ now = false } = {}) {
    dirty = true;
    if (now || isSeen(section)) return refresh();
    setStale(section, true);
    return Promise.resolve();
  }
  onShown(section, () => { if (dirty) refresh(); });
  return { invalidate, refresh, get dirty() { return dirty; } };
}
