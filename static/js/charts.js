// Plotly charts. Each function takes a container and data, and draws with Plotly.react so
// that repeated updates reuse the existing plot. No DOM lookups and no fetches; the only
// state is per container: what it shows, and a redraw waiting for it to scroll into view.
/* global Plotly */
import { categoryTicks, fitText, fitting, integerDtick, textWidth } from "./fit.js";

// ColorBrewer RdBu (colour-blind safe), blue < 0 < red, white at exactly 0.
export const DIVERGING = [
  [0.0, "#2166ac"], [0.125, "#4393c3"], [0.25, "#92c5de"], [0.375, "#d1e5f0"],
  [0.5, "#f7f7f7"],
  [0.625, "#fddbc7"], [0.75, "#f4a582"], [0.875, "#d6604d"], [1.0, "#b2182b"],
];
// ColorBrewer Blues (sequential, colour-blind safe): for values in [0, 1] such as attention
// weights, where 0 is "none" rather than the middle of a signed range.
export const SEQUENTIAL = [
  [0.0, "#f7fbff"], [0.125, "#deebf7"], [0.25, "#c6dbef"], [0.375, "#9ecae1"], [0.5, "#6baed6"],
  [0.625, "#4292c6"], [0.75, "#2171b5"], [0.875, "#08519c"], [1.0, "#08306b"],
];
export const ACCENT = "#2166ac";
export const MUTED = "#b2182b";

// No modebar: its "share" button uploads to Plotly's cloud (nothing leaves the server), it
// covers titles and hover labels, and the page has its own PNG/SVG buttons
// (static/js/export/index.js, Plotly.downloadImage).
// Not Plotly's `responsive`: a container that changes size is drawn again (ResizeObserver
// below), since the number of ticks and the wrapping of titles depend on the size.
export const CONFIG = { displayModeBar: false, displaylogo: false, responsive: false };
let fontScale = 1;

/** Scale every chart's fonts (the lesson's "larger fonts for the back row"); 1 is normal. */
export function setFontScale(scale) {
  fontScale = scale;
}

/** The root font size over 16 px: the page scales up on big screens (app.css clamp). */
function rootScale() {
  if (typeof document === "undefined") return 1;
  return (parseFloat(getComputedStyle(document.documentElement).fontSize) || 16) / 16;
}

/** A font size in px: `base` at normal text, scaled with the page and "larger text". */
export function px(base) {
  return Math.round(base * fontScale * rootScale());
}

/** The container's size in CSS px (a fallback for containers not laid out yet). */
function sizeOf(el) {
  return { w: el.clientWidth || 400, h: el.clientHeight || 260 };
}

/**
 * The layout shared by every chart: fonts scaled, the title wrapped to the plot's width
 * (two lines at most; a shortened title puts the whole one in the container's tooltip),
 * and room at the top for it. Axes get `automargin` so that labels are never cut.
 */
function baseLayout(el, title, extra) {
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
function axis(title, width, extra) {
  if (extra.small) title = ""; // no room: the title stays in the hover text
  delete extra.small;
  const fitted = fitText(title ?? "", Math.max(40, width), px(12), 2);
  return {
    title: { text: fitted.text, standoff: 4, ffnText: title ?? "", font: { size: px(12) } },
    automargin: true,
    tickangle: 0,
    // x labels a little lower: the first never touches the y axis's bottom label
    ticklabelstandoff: Math.round(px(12) * 0.3),
    showgrid: false,
    zeroline: false,
    ...extra,
  };
}

/**
 * Log axes spanning a few decades label the decades only (minor 2..9 labels crowd each
 * other); a narrower one keeps Plotly's own ticks (else it would show no number at all).
 */
function logTicks(type, values) {
  if (type !== "log") return {};
  const positive = values.filter((v) => v > 0);
  const decades = positive.length ? Math.log10(Math.max(...positive) / Math.min(...positive)) : 0;
  return decades >= 1.5 ? { dtick: 1, exponentformat: "SI" } : { exponentformat: "SI" };
}

/**
 * Plotly.react, then one check of what was drawn: an axis title wider than its container
 * (the estimate of the plot's width was too generous) is wrapped again to the plot width
 * Plotly really laid out. At most one more Plotly call, and only for such a title.
 */
async function react(el, traces, layout) {
  await Plotly.react(el, traces, layout, CONFIG);
  // automargin may lay the plot out once more after react resolves: check after a frame
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

/**
 * A robust colour range for a signed matrix: the `q` quantile of |value| (0.99: one outlier
 * feature cannot wash out the picture). Returns { zmax, cells: [[row, col]] beyond it }.
 */
export function robustRange(matrix, q = 0.99) {
  const all = [];
  for (const row of matrix) for (const v of row) all.push(Math.abs(v));
  if (!all.length) return { zmax: 1e-12, cells: [] };
  all.sort((a, b) => a - b);
  const zmax = all[Math.min(all.length - 1, Math.floor(q * (all.length - 1)))] || all[all.length - 1] || 1e-12;
  const cells = [];
  matrix.forEach((row, r) => row.forEach((v, c) => { if (Math.abs(v) > zmax) cells.push([r, c]); }));
  return { zmax, cells };
}

/** The largest |value| of a matrix (at least a tiny epsilon, so a zero matrix still draws). */
export function maxAbs(matrix) {
  let m = 0;
  for (const row of matrix) for (const v of row) if (Math.abs(v) > m) m = Math.abs(v);
  return m || 1e-12;
}

// ---- redraw only what is needed: unchanged charts are skipped, off-screen ones deferred ----

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
    for (const entry of entries) {
      const el = entry.target;
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
        for (const el of els) whenVisible(el, el.ffnLast.draw);
      });
    }
  })
  : null;

/** Draw every deferred chart now (before printing or exporting the whole page). */
export function drawDeferred() {
  const draws = [...waiting.values()];
  waiting.clear();
  return Promise.all(draws.map((draw) => draw()));
}
if (typeof window !== "undefined") window.addEventListener("beforeprint", () => { drawDeferred(); });

/**
 * Run `draw()` now when `el` is on screen (or has never been drawn); else keep it until `el`
 * scrolls into view: a Plotly.react costs ~10 ms per chart, and charts nobody can see
 * should not delay the ones they can. The container's data-* attributes are set by the
 * caller at once either way.
 */
function whenVisible(el, drawNow) {
  const draw = () => {
    const { w, h } = sizeOf(el);
    el.ffnLast = { draw: drawNow, w, h }; // drawn again when the container's size changes
    if (resizer && !el.ffnSized) {
      el.ffnSized = true;
      resizer.observe(el);
    }
    return drawNow();
  };
  if (!observer) return draw();
  if (!visible.has(el)) {
    visible.set(el, true);
    observer.observe(el);
    return draw();
  }
  if (visible.get(el)) {
    waiting.delete(el);
    return draw();
  }
  waiting.set(el, draw);
  return Promise.resolve(el);
}

/**
 * True when `el` already shows exactly this data with these options at this size, so that
 * a redraw can be skipped (a Plotly.react costs ~10 ms per chart even when nothing
 * changed). `data` is compared by identity, `opts` by value (functions ignored).
 */
function unchanged(el, data, opts) {
  const { w, h } = sizeOf(el);
  const key = JSON.stringify([opts, fontScale, rootScale(), w, h]); // a new size or font redraws
  if (el.ffnDrawn && el.ffnDrawn.data === data && el.ffnDrawn.key === key) return true;
  el.ffnDrawn = { data, key };
  return false;
}

/**
 * Which columns of a [rows x cols] matrix to draw: a window of at most `columns.width`
 * real columns starting at column index `columns.start` (no pooling: every drawn cell is
 * one entry of the tensor). columns: { start, width, total, index } where `index` names
 * the real column of each of z's columns (when z holds only some of them) or is absent.
 * Returns { from, to, x (real column indices), consecutive }.
 */
export function columnWindow(cols, columns) {
  const index = columns?.index ?? null;
  const width = Math.min(columns?.width ?? cols, cols);
  const start = columns?.start ?? 0;
  let from = index ? index.findIndex((v) => v >= start) : start;
  if (from < 0) from = cols - width;
  from = Math.max(0, Math.min(from, cols - width));
  const x = [];
  for (let c = from; c < from + width; c += 1) x.push(index ? Number(index[c]) : c);
  const consecutive = x.every((v, i) => i === 0 || v === x[i - 1] + 1);
  return { from, to: from + width, x, consecutive };
}

/**
 * A signed heatmap [rows x cols] with a symmetric colour range around 0.
 * opts: { title, xTitle, yTitle, zmax, yLabels, filename, showValues, format, showScale,
 *         showYTitle, columns: { start, width, total, index, label(first, last, total) },
 *         colorscale, zmin, sequential, clip: { zmax, beyond, note } }
 * With `columns`, a window of real columns is drawn and the x axis says which
 * (label(first, last, total), e.g. "units 0–255 of 2048").
 */
export function heatmap(el, z, opts) {
  const rows = z.length;
  const cols = rows ? z[0].length : 0;
  el.dataset.rows = String(rows);
  el.dataset.cols = String(cols);
  if (unchanged(el, z, opts)) return Promise.resolve(el);
  return whenVisible(el, () => drawHeatmap(el, z, rows, cols, opts));
}

function drawHeatmap(el, zAll, rows, cols, opts) {
  const win = columnWindow(cols, opts.columns);
  const windowed = win.from > 0 || win.to < cols || Boolean(opts.columns?.index);
  const z = windowed ? zAll.map((row) => row.slice(win.from, win.to)) : zAll;
  const total = opts.columns?.total ?? cols;
  el.dataset.windowStart = String(win.x[0] ?? 0);
  el.dataset.windowStop = String((win.x[win.x.length - 1] ?? -1) + 1);
  el.dataset.total = String(total);
  el.dataset.clipped = String(opts.clip?.cells.length ?? 0);
  const { w, h } = sizeOf(el);
  const size = px(12);
  const lineH = size * 1.25;
  const showScale = opts.showScale ?? true;
  // A very small plot (an embed in a slide) has no room for axis titles: they stay in the
  // hover text; an axis that names a window of columns keeps its title.
  const showYTitle = opts.showYTitle !== false && w >= 120;
  const yLabels = opts.yLabels;
  const yText = yLabels ? (opts.indexTicks ? yLabels.map((_, i) => String(i)) : shortLabels(yLabels, w * 0.35, size)) : null;
  const yLabelW = yText ? Math.max(...yText.map((s) => textWidth(s, size))) : textWidth(String(rows - 1), size);
  const left = (showYTitle ? lineH * 1.4 : 0) + yLabelW + 10;
  const right = showScale ? size * 4.2 + 16 : 8;
  const plotW = Math.max(30, w - left - right);
  const partial = win.x.length < total;
  const xTitle = partial && win.consecutive && opts.columns?.label
    ? opts.columns.label(win.x[0], win.x[win.x.length - 1], total) : h >= 150 ? opts.xTitle : "";
  const xFit = fitText(xTitle, Math.min(plotW * 0.85, w - 16), size, h >= 150 ? 2 : 1);
  const top = opts.title ? lineH + 14 : 10;
  const plotH = Math.max(30, h - top - lineH * (1.3 + xFit.lines * 1.1) - 14);
  const zmax = opts.zmax ?? maxAbs(z);
  const zmin = opts.zmin ?? -zmax;
  const trace = {
    type: "heatmap",
    z,
    zmin,
    zmax,
    colorscale: opts.colorscale ?? DIVERGING,
    showscale: showScale,
    colorbar: {
      thickness: Math.round(8 * rootScale()), outlinewidth: 0, tickformat: opts.sequential ? ".2~g" : "+.2~g",
      nticks: fitting(plotH * (opts.clip ? 0.7 : 1), lineH * 1.8, 2), tickfont: { size },
      // with a note on top, the bar is shorter so that its top label stays clear of the note
      ...(opts.clip ? { len: 0.72, y: 0, yanchor: "bottom" } : { len: 1 }),
      title: opts.clip ? { text: opts.clip.bar, side: "top", font: { size: px(10) } } : undefined,
    },
    hovertemplate: `${opts.yTitle} %{y}<br>${opts.xTitle} %{x}<br>%{z:+.4~g}<extra></extra>`,
  };
  if (!opts.sequential) trace.zmid = 0;
  if (trace.colorbar.nticks <= 3 && !opts.sequential) {
    // A short bar: its ends and zero, not one lonely "0"
    const m = Number(zmax.toPrecision(2)) > zmax ? Number((zmax * 0.95).toPrecision(2)) : Number(zmax.toPrecision(2));
    Object.assign(trace.colorbar, { tickmode: "array", tickvals: [-m, 0, m] });
  }
  if (yLabels) trace.y = yLabels;
  const xaxis = axis(xTitle, plotW, {});
  if (windowed && win.consecutive) {
    trace.x = win.x;
    const labelW = textWidth(String(win.x[win.x.length - 1]), size) + size * 1.5;
    Object.assign(xaxis, { type: "linear", tick0: 0, dtick: integerDtick(win.x.length, fitting(plotW, labelW, 1)),
      range: [win.x[0] - 0.5, win.x[win.x.length - 1] + 0.5] });
  } else if (windowed) {
    // Columns that are not consecutive (chosen by the server): named by their real index.
    const labels = win.x.map(String);
    trace.x = labels;
    const labelW = textWidth(labels[labels.length - 1], size) + size * 1.5;
    Object.assign(xaxis, { type: "category", ...categoryTicks(labels, fitting(plotW, labelW, 1)) });
  } else {
    const labelW = textWidth(String(cols - 1), size) + size * 1.5;
    Object.assign(xaxis, { type: "linear", tick0: 0, dtick: integerDtick(cols, fitting(plotW, labelW, 1)) });
  }
  xaxis.title.text = xFit.text;
  xaxis.title.ffnText = xTitle;
  const rowsFit = fitting(plotH, lineH * 1.1, 1);
  const yaxis = axis(showYTitle ? opts.yTitle : "", plotH, { autorange: "reversed" });
  if (yLabels) {
    const ticks = categoryTicks(yLabels, rowsFit);
    const byLabel = new Map(yLabels.map((l, i) => [l, yText[i]]));
    // Beside the first plot of a row, the rows are named by their position only.
    const index = new Map(yLabels.map((l, i) => [l, String(i)]));
    const name = opts.indexTicks ? (v) => index.get(v) : (v) => byLabel.get(v);
    Object.assign(yaxis, { type: "category", ...ticks, ticktext: ticks.tickvals.map(name) });
  } else {
    Object.assign(yaxis, { type: "linear", tick0: 0, dtick: integerDtick(rows, rowsFit) });
  }
  if (opts.showValues && opts.format) {
    trace.text = z.map((row) => row.map(opts.format));
    trace.texttemplate = "%{text}";
    trace.textfont = { size: px(12) };
  }
  const layout = baseLayout(el, opts.title, { xaxis, yaxis, uirevision: `${rows}x${cols}` });
  const traces = [trace];
  if (opts.clip && opts.clip.cells?.length) traces.push(clipMarkers(opts.clip.cells, trace, win));
  if (opts.marks) {
    // e.g. the units dropout dropped in train mode: "×" on those cells of the window
    const cells = [];
    opts.marks.forEach((row, r) => row.forEach((m, c) => { if (m) cells.push([r, c]); }));
    const marked = clipMarkers(cells, trace, win);
    marked.name = opts.markName;
    el.dataset.marks = String(marked.x.length);
    traces.push(marked);
  }
  return react(el, traces, layout);
}

/** Token labels no wider than `width` px ("12 independ…"); the axis keeps the whole one in hover. */
function shortLabels(labels, width, size) {
  const room = Math.max(width, textWidth("00 abcdefghij", size)); // never cut to a few letters
  return labels.map((label) => {
    if (textWidth(label, size) <= room) return label;
    let s = label;
    while (s.length > 4 && textWidth(`${s}…`, size) > room) s = s.slice(0, -1);
    return `${s}…`;
  });
}

/** Markers on the cells beyond a clipped colour range: [[row, column], ...] of the window. */
function clipMarkers(cells, trace, win) {
  const shown = cells.filter(([, c]) => c >= win.from && c < win.to);
  return {
    type: "scatter",
    mode: "markers",
    x: shown.map(([, c]) => (trace.x ? trace.x[c - win.from] : c)),
    y: shown.map(([r]) => (trace.y ? trace.y[r] : r)),
    marker: { symbol: "x-thin", size: 6, line: { width: 1.5, color: "#111" } },
    hoverinfo: "skip",
    showlegend: false,
  };
}

/**
 * A bar chart. opts: { title, xTitle, yTitle, text, colors, filename, yRange }. Bars named
 * by words (token labels, variant names) are drawn horizontally, so that every name can be
 * read in full, unrotated.
 */
const BAR_LABELS = 16; // more bars than this: values on hover only (labels would overlap)

export function bars(el, x, y, opts) {
  if (unchanged(el, y, { ...opts, x })) return Promise.resolve(el);
  return whenVisible(el, () => drawBars(el, x, y, opts));
}

function drawBars(el, x, y, opts) {
  const { w, h } = sizeOf(el);
  const size = px(12);
  const lineH = size * 1.25;
  const labels = x.map(String);
  const wordy = labels.some((l) => !/^-?\d+$/.test(l));
  const showText = labels.length <= BAR_LABELS;
  const trace = {
    type: "bar",
    marker: { color: opts.colors ?? ACCENT },
    text: showText ? opts.text : undefined,
    textposition: "outside",
    textfont: { size: px(11) },
    cliponaxis: false,
  };
  let layout;
  if (wordy) {
    const short = shortLabels(labels, w * 0.35, size);
    const labelW = Math.max(...short.map((s) => textWidth(s, size)));
    const plotW = Math.max(40, w - labelW - 24);
    const plotH = Math.max(30, h - lineH * 4 - 20);
    const ticks = categoryTicks(labels, fitting(plotH, lineH * 1.05, 1));
    const byLabel = new Map(labels.map((l, i) => [l, short[i]]));
    Object.assign(trace, { orientation: "h", x: y, y: labels,
      hovertemplate: `${opts.xTitle} %{y}<br>${opts.yTitle} %{x:.4~g}<extra></extra>` });
    const range = opts.yRange ?? [0, Math.max(...y.map((v) => Math.abs(v)), 1e-12) * (showText ? 1.3 : 1.05)];
    layout = baseLayout(el, opts.title, {
      xaxis: axis(opts.yTitle, plotW, { small: h < 150, range: y.some((v) => v < 0) ? undefined : range, nticks: fitting(plotW, size * 4, 2) }),
      yaxis: axis("", plotH, { type: "category", autorange: "reversed", ...ticks,
        ticktext: ticks.tickvals.map((v) => byLabel.get(v)) }),
    });
  } else {
    const plotW = Math.max(40, w - size * 5 - 20);
    const plotH = Math.max(30, h - lineH * 4 - 20);
    const labelW = textWidth(labels[labels.length - 1] ?? "0", size) + size;
    Object.assign(trace, { x: labels, y,
      hovertemplate: `${opts.xTitle} %{x}<br>${opts.yTitle} %{y:.4~g}<extra></extra>` });
    if (showText && opts.text && Math.max(...opts.text.map((s) => textWidth(s, px(11)))) > plotW / labels.length) {
      trace.text = undefined; // values would overlap: on hover only
    }
    layout = baseLayout(el, opts.title, {
      xaxis: axis(opts.xTitle, plotW, { small: h < 150, type: "category", ...categoryTicks(labels, fitting(plotW, labelW, 1)) }),
      yaxis: axis(opts.yTitle, plotH, { small: w < 170, range: opts.yRange, rangemode: "tozero", nticks: fitting(plotH, lineH * 2, 2) }),
    });
  }
  el.dataset.orientation = wordy ? "h" : "v";
  return react(el, [trace], layout);
}

/**
 * A histogram already binned (by the server, over a full tensor): bars over equal-width
 * bins with a vertical line at zero. edges [bins + 1], counts [bins].
 * opts: { title, xTitle, yTitle, filename }
 */
export function binnedHistogram(el, edges, counts, opts) {
  if (unchanged(el, counts, { ...opts, edges })) return Promise.resolve(el);
  return whenVisible(el, () => drawBinned(el, edges, counts, opts));
}

function drawBinned(el, edges, counts, opts) {
  const centres = counts.map((_, i) => (edges[i] + edges[i + 1]) / 2);
  const trace = {
    type: "bar",
    x: centres,
    y: counts,
    width: edges[1] - edges[0],
    marker: { color: ACCENT, line: { width: 0 } },
    customdata: counts.map((_, i) => [edges[i], edges[i + 1]]),
    hovertemplate: `[%{customdata[0]:.3~g}, %{customdata[1]:.3~g}): %{y}<extra></extra>`,
  };
  return react(el, [trace], zeroLineLayout(el, opts));
}

/** The layout of both histograms: bars with a vertical line at zero. */
function zeroLineLayout(el, opts) {
  const { w, h } = sizeOf(el);
  const size = px(12);
  const plotW = Math.max(40, w - size * 5 - 20);
  const plotH = Math.max(30, h - size * 5 - 20);
  return baseLayout(el, opts.title, {
    xaxis: axis(opts.xTitle, plotW, { small: h < 150, nticks: fitting(plotW, size * 4, 2) }),
    yaxis: axis(opts.yTitle, plotH, { small: w < 170, nticks: fitting(plotH, size * 2.5, 2) }),
    bargap: 0.02,
    shapes: [{ type: "line", x0: 0, x1: 0, y0: 0, y1: 1, yref: "paper", line: { color: MUTED, width: 2 } }],
  });
}

/** A histogram of values with a vertical line at zero. opts: { title, xTitle, yTitle, filename } */
export function histogram(el, values, opts) {
  if (unchanged(el, values, opts)) return Promise.resolve(el);
  return whenVisible(el, () => drawHistogram(el, values, opts));
}

function drawHistogram(el, values, opts) {
  const trace = { type: "histogram", x: values, marker: { color: ACCENT }, nbinsx: 60 };
  return react(el, [trace], zeroLineLayout(el, opts));
}

/**
 * Lines and point clouds on shared axes. series: [{ x, y, name, mode: "lines"|"markers",
 * color, dash, size, opacity }]. opts: { title, xTitle, yTitle, yType ("linear"|"log"),
 * xType, filename, xRange, yRange }. The legend stands right of the plot, clear of the axis titles.
 */
export function lines(el, series, opts) {
  return whenVisible(el, () => drawLines(el, series, opts));
}

function drawLines(el, series, opts) {
  const traces = series.map((s) => ({
    type: "scatter",
    mode: s.mode ?? "lines",
    x: s.x,
    y: s.y,
    name: s.name,
    line: { color: s.color, dash: s.dash, width: 2 },
    marker: { color: s.color, size: s.size ?? 5, opacity: s.opacity ?? 0.6 },
    hovertemplate: `${s.name}<br>${opts.xTitle} %{x:.4~g}<br>${opts.yTitle} %{y:.4~g}<extra></extra>`,
  }));
  const { w, h } = sizeOf(el);
  const size = px(12);
  const legendW = Math.max(...series.map((s) => textWidth(s.name ?? "", size))) + 40;
  const plotW = Math.max(40, w - legendW - size * 5);
  const plotH = Math.max(30, h - size * 5 - 20);
  const layout = baseLayout(el, opts.title, {
    xaxis: axis(opts.xTitle, plotW * 0.85, { small: h < 150, type: opts.xType ?? "linear", zeroline: true,
      range: opts.xRange, nticks: fitting(plotW, size * 4.5, 2), ...logTicks(opts.xType, series.flatMap((t) => t.x)) }),
    yaxis: axis(opts.yTitle, plotH, { small: w < 170, type: opts.yType ?? "linear", range: opts.yRange,
      nticks: fitting(plotH, size * 2.5, 2), ...logTicks(opts.yType, series.flatMap((t) => t.y)) }),
    legend: { orientation: "v", x: 1.02, xanchor: "left", y: 1, yanchor: "top", font: { size: px(11) } },
  });
  el.dataset.traces = String(traces.length);
  return react(el, traces, layout);
}

/** Series colours for side-by-side comparisons (ColorBrewer Dark2, colour-blind friendly). */
export const SERIES = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];
