// What every chart shares: colours, the Plotly config, font scaling, the base layout and
// axes, and the Plotly.react that re-wraps a title Plotly laid out wider than its plot.
// No DOM lookups and no fetches.
/* global Plotly */
import { fitText, fitTitle, textWidth } from "../fit.js";
import RULES from "./rules.json" with { type: "json" };

// The chart rules (colours, robust quantile, window widths) live in one data file that the
// Python figures read too (app/lab/figures/rules.py): rules.json.
// ColorBrewer RdBu (colour-blind safe), blue < 0 < red, white at exactly 0.
export const DIVERGING = RULES.diverging;
// Its upper half, white at 0 to red, for signed values that are never negative (ReLU's
// hidden units): the same colour for the same value, without a blue half no value takes.
export const DIVERGING_POSITIVE = DIVERGING.filter(([at]) => Number(at) >= 0.5)
  .map(([at, colour]) => [(Number(at) - 0.5) * 2, colour]);
// ColorBrewer Blues (sequential, colour-blind safe): for values in [0, 1] such as attention
// weights, where 0 is "none" rather than the middle of a signed range.
export const SEQUENTIAL = RULES.sequential;
export const ACCENT = RULES.accent;
export const MUTED = RULES.muted;
/** The quantile of |value| a robust colour range ends at: one outlier cannot wash out a map. */
export const ROBUST_QUANTILE = RULES.robust_quantile;
/** Columns a heatmap draws at once (static/js/windows.js): no pooling, one cell per entry. */
export const WINDOW_WIDTH = RULES.window;
/** When a heatmap prints its numbers in its cells: { hand_size, digits, pad } (heatmap.js). */
export const CELL_NUMBERS = RULES.cell_numbers;

// No modebar: its "share" button uploads to Plotly's cloud (nothing leaves the server), it
// covers titles and hover labels, and the page has its own PNG/SVG buttons
// (static/js/export/index.js, Plotly.downloadImage).
// Not Plotly's `responsive`: a container that changes size is drawn again (ResizeObserver
// in redraw.js), since the number of ticks and the wrapping of titles depend on the size.
export const CONFIG = { displayModeBar: false, displaylogo: false, responsive: false };
let fontScale = 1;

/** Scale every chart's fonts (the lesson's "larger fonts for the back row"); 1 is normal. */
export function setFontScale(scale) {
  fontScale = scale;
  forgetSizes();
}

/** The current font scale (see setFontScale). */
export function currentFontScale() {
  return fontScale;
}

let rootCache = { key: "", scale: 1, floor: 0 };

/** The smallest chart text on a phone or tablet (px): readable in a student's hand. */
export const PHONE_MIN_FONT = 12;
/** The window width up to which the page is laid out for phones and tablets (phone.css). */
const PHONE_QUERY = "(max-width: 900px)";

// The viewport's generation: counts resize events (a new window size or zoom). Reading
// window.innerWidth after a chart changed the DOM forces a layout of the whole page (~25 ms
// on a phone's CPU at the first draw), so the size is not read per call: the browser says
// when it changed (resize events run before the frame's ResizeObserver callbacks).
let viewport = 0;
if (typeof window !== "undefined") window.addEventListener("resize", () => { viewport += 1; });

/**
 * The root font size over 16 px: the page scales up on big screens (app.css clamp). It
 * depends on the viewport (`vw`, the zoom) and on the root's classes ("larger text": html.big)
 * only, so it is read once per viewport size and class:
 * getComputedStyle forces a style recalculation, and px() is called dozens of times per chart.
 */
export function rootScale() {
  if (typeof document === "undefined") return 1;
  const key = `${viewport} ${document.documentElement.className}`;
  if (rootCache.key !== key) {
    const root = document.documentElement;
    // a phone or tablet (not an embed, whose fixed frame has its own smaller text): no
    // chart text under PHONE_MIN_FONT
    const phone = !root.classList.contains("embed") && window.matchMedia?.(PHONE_QUERY).matches;
    rootCache = { key, scale: (parseFloat(getComputedStyle(root).fontSize) || 16) / 16, floor: phone ? PHONE_MIN_FONT : 0 };
  }
  return rootCache.scale;
}

/**
 * A font size in px: `base` at normal text, scaled with the page and "larger text"; never
 * under PHONE_MIN_FONT on a phone or tablet.
 */
export function px(base) {
  const size = Math.round(base * fontScale * rootScale());
  return Math.max(size, rootCache.floor);
}

// Sizes read in this frame: reading clientWidth after a chart was drawn forces the browser to
// lay the page out again, once per chart; the charts of one answer are sized in one layout.
// Forgotten at the next frame (a container that changes size later is drawn again by the
// ResizeObserver in redraw.js).
let frameSizes = new WeakMap();
let forgetting = false;

/** The container's size in CSS px (a fallback for containers not laid out yet). */
export function sizeOf(el) {
  const known = frameSizes.get(el);
  if (known) return known;
  const size = { w: el.clientWidth || 400, h: el.clientHeight || 260 };
  frameSizes.set(el, size);
  if (!forgetting && typeof requestAnimationFrame === "function") {
    forgetting = true;
    requestAnimationFrame(() => { frameSizes = new WeakMap(); forgetting = false; });
  }
  return size;
}

/** Forget the sizes read in this frame (a caller that changed the page's layout itself). */
export function forgetSizes() {
  frameSizes = new WeakMap();
}

/**
 * The layout shared by every chart: fonts scaled, the title wrapped to the plot's width
 * (two lines at most; a shortened title puts the whole one in the container's tooltip),
 * and room at the top for it. Axes get `automargin` so that labels are never cut.
 */
export function baseLayout(el, title, extra) {
  const { w, h } = sizeOf(el);
  const size = px(13);
  const fitted = fitText(title ?? "", w - 16, size, 2);
  if (fitted.cut) el.title = title;
  else el.removeAttribute("title");
  return {
    // The container's size, explicitly: a redraw (ResizeObserver) always fits its container.
    width: w,
    height: h,
    autosize: false,
    margin: { l: 8, r: 8, t: title ? 8 : 10, b: 8, pad: 2 },
    font: { family: "system-ui, sans-serif", size: px(12), color: "#1a1a1a" },
    title: { text: fitted.text, ffnText: title ?? "", font: { size }, x: 0.5, xref: "container", y: 1, yref: "paper", yanchor: "bottom", automargin: true, pad: { b: 6 } },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    ...extra,
  };
}

/** An axis: automargin, unrotated labels, the title wrapped to `width` px. */
export function axis(title, width, extra) {
  const whole = title ?? ""; // an exported picture always names its axes (exportText)
  if (extra.small) title = ""; // no room: the title stays in the hover text
  delete extra.small;
  // A title that would wrap loses a trailing gloss without numbers ("position (token)",
  // "位置（词元）") when that makes it one line; the hover text keeps the whole title.
  const fitted = fitTitle(title, Math.max(40, width), px(12), 2);
  return {
    title: { text: fitted.text, standoff: 4, ffnText: title ?? "", exportText: whole, font: { size: px(12) } },
    automargin: true,
    tickangle: 0,
    // x labels a little lower: the first never touches the y axis's bottom label
    ticklabelstandoff: Math.round(px(12) * 0.3),
    // Ticks are chosen to fit and automargin makes room for them: Plotly's check of each
    // label against the container (measuring every label's box, every redraw) is not needed.
    ticklabeloverflow: "allow",
    showgrid: false,
    zeroline: false,
    ...extra,
  };
}

/**
 * Log axes spanning a few decades label the decades only (minor 2..9 labels crowd each
 * other); a narrower one keeps Plotly's own ticks (else it would show no number at all).
 */
export function logTicks(type, values) {
  if (type !== "log") return {};
  const positive = values.filter((v) => v > 0);
  if (!positive.length) return { exponentformat: "SI" };
  const lo = Math.min(...positive);
  const hi = Math.max(...positive);
  const decades = Math.log10(hi / lo);
  if (decades >= 3) return { dtick: 1, exponentformat: "SI" };
  if (decades < 1) return { exponentformat: "SI" };
  // one to three decades (e.g. T = 1..64): 1, 2, 5, 10, 20, 50 with their full values
  // (Plotly's "D2" would print 50 as a bare "5")
  const tickvals = [];
  for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k += 1) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** k;
      if (v >= lo * 0.999 && v <= hi * 1.001) tickvals.push(v);
    }
  }
  return { tickmode: "array", tickvals, ticktext: tickvals.map((v) => (v >= 1000 ? v.toLocaleString("en-US") : String(Number(v.toPrecision(1))))), exponentformat: "SI" };
}

/**
 * Plotly.react, then one check of what was drawn: an axis title wider than its container
 * (the estimate of the plot's width was too generous) is wrapped again to the plot width
 * Plotly really laid out. At most one more Plotly call, and only for such a title.
 */
export async function react(el, traces, layout) {
  // The config once, with the first picture: given again, Plotly.react rebuilds the plot's
  // whole context and compares it with the old one on every redraw.
  await Plotly.react(el, traces, layout, el._fullLayout && el._context ? undefined : CONFIG);
  // the export buttons show once there is a picture (app.css .plot-wrap[data-drawn])
  const wrap = el.parentElement;
  if (wrap?.classList.contains("plot-wrap") && !wrap.hasAttribute("data-drawn")) wrap.setAttribute("data-drawn", "");
  // Checked after a frame, when the browser lays the page out anyway: checked at once, each
  // chart's box read forced a layout of its own, and a dragged slider showed fewer values
  // (benchmarks.ab_page --drag: 0.37 against 0.45 values per two frames).
  await new Promise((resolve) => { requestAnimationFrame(resolve); });
  const box = el.getBoundingClientRect();
  const size = el._fullLayout?._size;
  if (!size) return el;
  const update = {};
  for (const [cls, name, room] of [["xtitle", "xaxis", size.w], ["ytitle", "yaxis", size.h]]) {
    const text = el.querySelector(`.${cls}`);
    const wanted = layout[name]?.title?.ffnText;
    if (!text || !wanted) continue;
    const r = text.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
      update[`${name}.title.text`] = fitText(wanted, Math.max(30, room - 4), px(12), 3).text;
    }
  }
  const title = el.querySelector(".gtitle");
  const wanted = layout.title?.ffnText;
  if (title && wanted) {
    const r = title.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1) {
      // no room for two lines: one, shortened, with the whole title in the tooltip
      update["title.text"] = fitText(wanted, box.width - 12, px(13), 1).text;
      el.title = wanted;
    }
  }
  if (Object.keys(update).length) await Plotly.relayout(el, update);
  return el;
}

/** Token labels no wider than `width` px ("12 independ…"); the axis keeps the whole one in hover. */
export function shortLabels(labels, width, size) {
  const room = Math.max(width, textWidth("00 abcdefghij", size)); // never cut to a few letters
  return labels.map((label) => {
    if (textWidth(label, size) <= room) return label;
    let s = label;
    while (s.length > 4 && textWidth(`${s}…`, size) > room) s = s.slice(0, -1);
    return `${s}…`;
  });
}

/** Series colours for side-by-side comparisons (ColorBrewer Dark2, colour-blind friendly). */
export const SERIES = RULES.series;
