// Compute what is seen (issue 11): a view (a <section>) is requested when it is on screen or
// near it, or when it is the one the lesson or the embed shows; the others are marked stale
// and fetched when they scroll into view. While a view's request is pending its plots are
// dimmed under a busy overlay; a refused request says so at the view itself (issue 10).
import { t } from "./i18n.js";

/** How far outside the viewport a view still counts as seen (pixels, above and below). */
export const NEAR_PX = 200;

let forced = ""; // section id the lesson or embed shows, always computed
const shown = new Map(); // section -> [fn] called when it scrolls into view
const observer = typeof IntersectionObserver === "function"
  ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
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

/** The width (px) the full busy label needs: its text plus the spinner's room (live.css). */
function textRoom(label) {
  measure ??= document.createElement("canvas").getContext("2d");
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  if (!measure) return 12 * rem;
  measure.font = `600 ${rem}px system-ui, sans-serif`;
  return measure.measureText(label).width + 2.8 * rem + 8;
}

/**
 * Mark `section` as waiting for an answer: aria-busy on the section dims its plots and
 * shows the busy overlay (static/css/live.css); every plot wrapper carries the label.
 */
export function setBusy(section, busy) {
  if (!section) return;
  if (busy) {
    section.setAttribute("aria-busy", "true");
    const label = t("status.loading");
    // A label wider than a plot would spill past it: narrow plots get the compact one.
    const room = textRoom(label);
    for (const wrap of section.querySelectorAll(".plot-wrap, .plot")) {
      wrap.dataset.busyLabel = label;
      if (wrap.clientWidth && wrap.clientWidth < room) wrap.dataset.busyNarrow = "1";
      else delete wrap.dataset.busyNarrow;
    }
  } else {
    section.removeAttribute("aria-busy");
  }
  document.body.dataset.busy = String(document.querySelectorAll("section[aria-busy='true']").length);
}

/** Mark `section` stale: it shows an older configuration and will be fetched when seen. */
export function setStale(section, stale) {
  if (!section) return;
  if (stale) section.dataset.stale = "1";
  else delete section.dataset.stale;
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
    setBusy(section, true);
    try {
      await request();
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
