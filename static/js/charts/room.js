// A heatmap's room in its container, from its size and options alone: its y labels and
// title (left), its colour bar (right), and the columns its plot area shows one per pixel.
// static/js/charts/heatmap.js lays its frame out from these; static/js/views.js fits the
// column windows (static/js/windows.js) to them.
import { textWidth } from "../fit.js";
import { px, shortLabels, sizeOf } from "./common.js";

/**
 * The room of a heatmap's y labels and title (left) in its container, from its size and
 * options alone (`rows`: its number of rows). No DOM writes.
 */
export function marginsOf(el, rows, opts) {
  const { w, h } = sizeOf(el);
  const size = px(12);
  const lineH = size * 1.25;
  // A very small plot (an embed in a slide) has no room for axis titles: they stay in the
  // hover text; an axis that names a window of columns keeps its title.
  const showYTitle = opts.showYTitle !== false && w >= 120;
  const yLabels = opts.yLabels;
  const yText = yLabels ? (opts.indexTicks ? yLabels.map((_, i) => String(i)) : shortLabels(yLabels, w * 0.35, size)) : null;
  // numbered rows keep the room of the most the plot may get (`rowsUpTo`, see rowNumbers)
  const rowDigits = String(Math.max(rows, opts.rowsUpTo ?? 0) - 1).length;
  const yLabelW = yText ? Math.max(...yText.map((s) => textWidth(s, size))) : textWidth("0".repeat(rowDigits), size);
  const left = (showYTitle ? lineH * 1.4 : 0) + yLabelW + 10;
  return { w, h, size, lineH, showYTitle, yLabels, yText, rowDigits, left };
}

/** The colour bar's room (px) right of a heatmap's plot area, or the edge's without one. */
export function rightOf(size, showScale) {
  return showScale ? size * 4.2 + 16 : 8;
}

/**
 * The most columns of a window a heatmap of `rows` rows in `el` draws one per CSS pixel or
 * more (its colour bar shown unless `opts.showScale` is false): whole sixteens of the
 * plot area's width, so that no column of a window is lost between pixels (Plotly draws a
 * heatmap as an image of one pixel per cell, scaled to the plot with nearest-neighbour
 * sampling: more cells than pixels and some are not drawn at all).
 */
export function columnsThatFit(el, rows, opts, { measured = false } = {}) {
  const { w, h, size, left } = marginsOf(el, rows, opts);
  let plotW = w - left - rightOf(size, opts.showScale ?? true);
  // `measured`, and drawn at this size before: the plot area Plotly laid out (wider tick or
  // colour-bar labels than the estimate take more of the width)
  const drawn = el._fullLayout?.xaxis?._length;
  if (measured && drawn && el.ffnLast && Math.abs(el.ffnLast.w - w) <= 1 && Math.abs(el.ffnLast.h - h) <= 1) {
    plotW = Math.min(plotW, drawn);
  }
  return Math.max(16, Math.floor((plotW - 1) / 16) * 16);
}

/** True when `el`'s drawn heatmap has more columns than its plot area has pixels across. */
export function overflows(el) {
  const trace = el.data?.find((t) => t.type === "heatmap");
  const length = el._fullLayout?.xaxis?._length;
  return Boolean(trace?.z?.[0] && length && trace.z[0].length > length + 0.5);
}
