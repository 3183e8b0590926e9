// Heatmaps: a signed matrix on a symmetric diverging scale (or a sequential one), a window
// of real columns named on the axis, robust colour ranges with the clipped cells marked.
/* global Plotly */
import { categoryTicks, fitTitle, fitting, integerDtick, rowFont, signedTicks, textWidth } from "../fit.js";
import { axis, baseLayout, CELL_NUMBERS, DIVERGING, DIVERGING_POSITIVE, px, react, rootScale, ROBUST_QUANTILE, shortLabels } from "./common.js";
import { columnsThatFit, marginsOf, rightOf } from "./room.js";
import { unchanged, whenVisible } from "./redraw.js";
import { repaintRows, restyleValues } from "./repaint.js";

/**
 * A robust colour range for a signed matrix: the `q` quantile of |value| (rules.json: 0.99, one outlier
 * feature cannot wash out the picture). Returns { zmax, cells: [[row, col]] beyond it }.
 */
export function robustRange(matrix, q = ROBUST_QUANTILE) {
  const all = [];
  for (const row of matrix) for (const v of row) all.push(Math.abs(v));
  if (!all.length) return { zmax: 1, cells: [] };
  all.sort((a, b) => a - b);
  const zmax = all[Math.min(all.length - 1, Math.floor(q * (all.length - 1)))] || all[all.length - 1] || 1;
  const cells = [];
  matrix.forEach((row, r) => row.forEach((v, c) => { if (Math.abs(v) > zmax) cells.push([r, c]); }));
  return { zmax, cells };
}

/**
 * The largest |value| of a matrix; 1 for a matrix of zeros (every hidden unit of a tiny ReLU
 * layer can be 0): it draws white on a −1..+1 bar, not on a bar of ±1e-12 with "+5e-13" ticks.
 */
/** The smallest finite value of a matrix (Infinity when it has none). */
function minOf(matrix) {
  let m = Infinity;
  for (const row of matrix) for (const v of row) if (Number.isFinite(v) && v < m) m = v;
  return m;
}

export function maxAbs(matrix) {
  let m = 0;
  for (const row of matrix) for (const v of row) if (Math.abs(v) > m) m = Math.abs(v);
  return m || 1;
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
 * opts: { title, xTitle, yTitle, zmax, yLabels, xLabels (a name per column, drawn whole),
 *         filename, showValues, format, shorten (value, digits) => text, showScale,
 *         showYTitle, columns: { start, width, total, index, label(first, last, total) },
 *         colorscale, zmin, sequential, clip: { zmax, beyond, note }, rowsUpTo, titleLines }
 * `rowsUpTo`: the most rows the plot may get while it stays (the Tokens slider's most):
 * numbered rows keep the room of its widest number.
 * `titleLines`: the lines the x title takes at least (levelTitles: the most in its row).
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

/**
 * Heatmaps side by side, `{ el, z, opts }` each: their options with `titleLines`, the most
 * lines an x title takes among the plots of its row on the page (containers with one top).
 * A title that wraps in one plot of a row ("features 0–127" above "of 512" in a narrow
 * input) gives the others a blank line under theirs, so that the row's plot areas keep one
 * height and a token's row sits level across them. Reads sizes (one layout), draws nothing.
 */
export function levelTitles(items) {
  const lines = items.map(({ el, z, opts }) => frameOf(el, z, z[0]?.length ?? 0, opts).xFit.lines);
  // titles of one height need no rows (reading the plots' places may lay the page out)
  if (lines.every((n) => n === lines[0])) return items.map(({ opts }) => ({ ...opts, titleLines: lines[0] }));
  const tops = items.map(({ el }) => Math.round(el.getBoundingClientRect().top));
  return items.map(({ opts }, i) => ({
    ...opts,
    titleLines: Math.max(...lines.filter((_, j) => tops[j] === tops[i])),
  }));
}

/**
 * Where a heatmap's parts go in its container, from its size and options alone: the window
 * of columns drawn (never more than fit, `columnsThatFit`), the room of the y labels and
 * title (left), of the colour bar (right), and the x title fitted to the width it may use.
 * No DOM writes.
 */
function frameOf(el, zAll, cols, opts) {
  const { w, h, size, lineH, showYTitle, yLabels, yText, rowDigits, left } = marginsOf(el, zAll.length, opts);
  const fit = opts.columns ? columnsThatFit(el, zAll.length, opts) : cols;
  const win = columnWindow(cols, opts.columns && { ...opts.columns, width: Math.min(opts.columns.width ?? cols, fit) });
  const windowed = win.from > 0 || win.to < cols || Boolean(opts.columns?.index);
  const z = windowed ? zAll.map((row) => row.slice(win.from, win.to)) : zAll;
  const rows = z.length;
  const total = opts.columns?.total ?? cols;
  const printed = opts.showValues && opts.format;
  // A small plot that prints its numbers in its cells (the tiny preset in a slide's frame)
  // gives its colour bar's room to them, when they fit there: they say what the colours mean.
  let showScale = opts.showScale ?? true;
  if (showScale && printed && w < SCALE_ROOM) {
    const bare = Math.max(30, w - left - 8) / Math.max(1, z[0]?.length ?? 1);
    showScale = !cellValues(z, bare, (h - 60) / Math.max(1, rows), size, opts);
  }
  const right = rightOf(size, showScale);
  const plotW = Math.max(30, w - left - right);
  const partial = win.x.length < total;
  const xTitle = partial && win.consecutive && opts.columns?.label
    ? opts.columns.label(win.x[0], win.x[win.x.length - 1], total) : h >= 150 ? opts.xTitle : "";
  // Plotly centres the x title under the plot: it may use the container on both sides of
  // that centre (a narrow plot beside its y labels had "features 0–127 o…" in 80 px)
  const centre = left + plotW / 2;
  const titleW = Math.max(40, Math.min(2 * Math.min(centre, w - centre) - 12, w - 16));
  const xFit = fitTitle(xTitle, titleW, size, h >= 150 ? 2 : 1);
  return { win, windowed, z, total, h, size, lineH, showYTitle, yLabels, yText, rowDigits, printed, showScale, plotW, xTitle, titleW, xFit };
}

function drawHeatmap(el, zAll, rows, cols, opts) {
  const { win, windowed, z, total, h, size, lineH, showYTitle, yLabels, yText, rowDigits, printed, showScale, plotW, xTitle, titleW, xFit } =
    frameOf(el, zAll, cols, opts);
  el.dataset.windowStart = String(win.x[0] ?? 0);
  el.dataset.windowStop = String((win.x[win.x.length - 1] ?? -1) + 1);
  el.dataset.total = String(total);
  el.dataset.clipped = String(opts.clip?.cells.length ?? 0);
  // as many lines as the row's widest title (levelTitles): the rest of them blank
  const titleLines = xFit.text ? Math.max(xFit.lines, opts.titleLines ?? 1) : xFit.lines;
  const top = opts.title ? lineH + 14 : 10;
  const plotH = Math.max(30, h - top - lineH * (1.3 + titleLines * 1.1) - 14);
  const zmax = opts.zmax ?? maxAbs(z);
  // Signed values none of which is negative (ReLU's hidden units), on a range of their own:
  // the signed scale's upper half from 0, so that the colour bar shows no blue half (and no
  // "−1") that no drawn value takes. Each value keeps the colour the whole scale gives it.
  const positive = !opts.sequential && opts.zmax === undefined && opts.zmin === undefined && minOf(z) >= 0
    && z.some((row) => row.some((v) => v > 0));
  const zmin = opts.zmin ?? (positive ? 0 : -zmax);
  // Named rows (tokens): every row labelled, in a smaller font when they would crowd
  const rowF = yLabels ? rowFont(rows, plotH, size, Math.min(size, px(9))) : { size, all: false };
  const nticks = fitting(plotH * (opts.clip ? 0.7 : 1), lineH * 1.8, 2);
  const trace = {
    type: "heatmap",
    z,
    zmin,
    zmax,
    colorscale: opts.colorscale ?? (positive ? DIVERGING_POSITIVE : DIVERGING),
    showscale: showScale,
    colorbar: {
      thickness: Math.round(8 * rootScale()), outlinewidth: 0, tickfont: { size },
      ticklabeloverflow: "allow", // its labels have their room (the margin): not measured again
      // signed: "+1", "0", "−1" (a "+" format would print "+0"); sequential: Plotly's ticks
      // (a bar of positive values only has all its length for them: twice the steps)
      ...(opts.sequential ? { tickformat: ".2~g", nticks } : signedTicks(zmin, zmax, positive && nticks >= 3 ? 2 * nticks - 1 : nticks)),
      // with a note on top, the bar is shorter so that its top label stays clear of the note
      ...(opts.clip ? { len: 0.72, y: 0, yanchor: "bottom" } : { len: 1 }),
      title: opts.clip ? { text: opts.clip.bar, side: "top", font: { size: px(10) } } : undefined,
    },
    // the value named by the plot's title ("Hidden act(·) = 0.1064"); "+" is not forced: an
    // exact zero (a unit ReLU turned off) reads "0"
    hovertemplate: `${opts.yTitle} %{y}<br>${opts.xTitle} %{x}<br>${opts.title ? `${opts.title} = ` : ""}%{z:.4~g}<extra></extra>`,
  };
  if (!opts.sequential && !positive) trace.zmid = 0;
  if (yLabels) trace.y = yLabels;
  const xaxis = axis(xTitle, titleW, {});
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
  } else if (opts.xLabels?.length === cols) {
    // Named columns (e.g. the stack's tokens): as many names as fit unrotated, each in hover
    const names = opts.xLabels.map(String);
    const short = shortLabels(names, Math.max(plotW / 3, 60), size);
    trace.x = names;
    const labelW = Math.max(...short.map((s) => textWidth(s, size))) + size;
    const ticks = categoryTicks(names, fitting(plotW, labelW, 1));
    const byName = new Map(names.map((n, i) => [n, short[i]]));
    Object.assign(xaxis, { type: "category", ...ticks, ticktext: ticks.tickvals.map((v) => byName.get(v)) });
  } else {
    const labelW = textWidth(String(cols - 1), size) + size * 1.5;
    Object.assign(xaxis, { type: "linear", tick0: 0, dtick: integerDtick(cols, fitting(plotW, labelW, 1)) });
  }
  xaxis.title.text = xFit.text + "<br>\u00a0".repeat(titleLines - xFit.lines);
  xaxis.title.ffnText = xTitle;
  const rowsFit = rowF.all ? rows : fitting(plotH, lineH * 1.1, 1);
  const yaxis = axis(showYTitle ? opts.yTitle : "", plotH, { autorange: "reversed" });
  yaxis.title.exportText = opts.yTitle ?? "";
  // an empty title ("") still takes room beside its axis in Plotly (its standoff and a
  // line): none at all, so that a small plot's cells keep that room
  for (const ax of [xaxis, yaxis]) if (!ax.title.text) ax.title.text = null;
  if (yLabels) {
    const ticks = categoryTicks(yLabels, rowsFit);
    const byLabel = new Map(yLabels.map((l, i) => [l, yText[i]]));
    // Beside the first plot of a row, the rows are named by their position only.
    const index = new Map(yLabels.map((l, i) => [l, String(i)]));
    const name = opts.indexTicks ? (v) => index.get(v) : (v) => byLabel.get(v);
    Object.assign(yaxis, { type: "category", ...ticks, ticktext: ticks.tickvals.map(name) });
    if (rowF.size < size) yaxis.tickfont = { size: rowF.size };
    // a single unnamed row (a bias vector): no tick mark and no label beside it
    if (yLabels.every((l) => !String(l).trim())) Object.assign(yaxis, { ticks: "", showticklabels: false });
  } else {
    Object.assign(yaxis, { type: "linear", tick0: 0, dtick: integerDtick(rows, rowsFit), ...rowNumbers(rowDigits) });
  }
  if (printed) {
    const cellW = plotW / Math.max(1, z[0]?.length ?? 1);
    const values = cellValues(z, cellW, plotH / Math.max(1, rows), size, opts);
    if (values) {
      trace.text = values.text;
      trace.texttemplate = "%{text}";
      trace.textfont = { size: values.size };
    }
    markValues(el, values);
  }
  // A small plot (the tiny preset in a slide's frame) may give more of itself to its labels
  // and title than Plotly's 64 px: else its tick labels are cut and its title shortened.
  const layout = baseLayout(el, opts.title, { xaxis, yaxis, uirevision: `${rows}x${cols}`,
    minreducedwidth: MIN_AREA, minreducedheight: MIN_AREA });
  /** @type {object[]} the heatmap, then its marker traces */
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
  // A new answer of the same shape and look (a seed, a perturbation, a dropout rate): only
  // the values and their colour range change. Plotly.restyle of those leaves the axes,
  // titles and layout as drawn; Plotly.react would compare and lay out all of them again.
  const frame = printed || traces.length > 1 ? null : frameKey(trace, layout);
  if (frame && el.ffnFrame === frame && el.data?.length === 1) {
    el.ffnRestyles = (el.ffnRestyles ?? 0) + 1;
    return restyleValues(el, trace);
  }
  // A new number of rows in the same frame (a Tokens step): new values, row names and y
  // ticks, while the x axis, titles, colour bar's place and margins stay as drawn.
  const rowsFrame = frame && rowsKey(trace, layout);
  const drawnRows = el.ffnRowsFrame;
  el.ffnFrame = frame;
  el.ffnRowsFrame = rowsFrame;
  if (rowsFrame && drawnRows === rowsFrame && el.data?.length === 1) {
    return repaintRows(el, trace, layout).then((done) => (done ? el : react(el, traces, layout)));
  }
  const drawn = react(el, traces, layout);
  return printed ? drawn.then(() => refitValues(el, trace, size, opts)) : drawn;
}

/**
 * Row numbers (positions) as wide as the widest the plot may show, `digits` digits: the
 * narrower ones are padded with figure spaces (U+2007, a digit's width) before them. A Tokens
 * step from 10 rows to 11 (its first "10") then keeps the plot's margins and place instead
 * of moving the plot sideways with a whole redraw (Plotly's automargin); hover reads the
 * bare number. Plotly's tickformat is a d3-format specifier: fill, align ">", width, "d".
 */
function rowNumbers(digits) {
  return digits > 1 ? { tickformat: `\u2007>${digits}d`, hoverformat: "d" } : {};
}

/** Everything a heatmap draws except its values and their colour range (z, zmin, zmax and
 * the colour bar's ticks, which follow them). */
function frameKey(trace, layout) {
  const { z, zmin, zmax, colorbar, ...look } = trace;
  const { tickvals, ticktext, ...bar } = colorbar;
  return JSON.stringify([look, bar, layout]);
}

/** A heatmap's frame less what follows its number of rows: the row names (y), the y
 * axis's ticks and the figure's uirevision, besides the values and colour range. */
function rowsKey(trace, layout) {
  const { z, zmin, zmax, colorbar, y, ...look } = trace;
  const { tickvals, ticktext, ...bar } = colorbar;
  const { tickvals: rowVals, ticktext: rowText, dtick, ...rowAxis } = layout.yaxis;
  const { uirevision, yaxis, ...rest } = layout;
  return JSON.stringify([look, Boolean(y), bar, rowAxis, rest]);
}

/** What a heatmap printed in its cells, for the tests and the next refit. */
function markValues(el, values) {
  el.dataset.valueFont = String(values?.size ?? 0);
  el.dataset.valueDigits = values?.digits ? String(values.digits) : "";
}

/**
 * The numbers fitted again to the cells Plotly really laid out: the estimate of the plot's
 * width is too generous for a small plot (its margins take more than estimated), and numbers
 * sized for the estimate would run together. At most one more Plotly call, only when the
 * font or the digits change.
 */
async function refitValues(el, trace, size, opts) {
  // a newer answer drawn meanwhile (the user moved a slider): its own refit follows it
  if (el.data?.[0] !== trace) return el;
  const { z } = trace;
  const xa = el._fullLayout?.xaxis;
  const ya = el._fullLayout?.yaxis;
  if (!xa?._length || !ya?._length || !z.length) return el;
  const values = cellValues(z, xa._length / z[0].length, ya._length / z.length, size, opts);
  const font = String(values?.size ?? 0);
  const digits = values?.digits ? String(values.digits) : "";
  if (font === el.dataset.valueFont && digits === el.dataset.valueDigits) return el;
  markValues(el, values);
  if (values) {
    await Plotly.restyle(el, { text: [values.text], texttemplate: "%{text}", "textfont.size": values.size }, [0]);
  } else {
    // no numbers after all: the colour bar they took the room of comes back
    const scale = (opts.showScale ?? true) && !trace.showscale;
    await Plotly.restyle(el, { text: [null], texttemplate: "", ...(scale ? { showscale: true } : {}) }, [0]);
  }
  return el;
}

/**
 * The numbers printed in a heatmap's cells: the widest inside its cell, in a smaller font
 * for narrow cells but never under 9 px. When the format's numbers do not fit at 9 px
 * (a 4 x 4 weight matrix: "+0.3441" in a 32 px cell), fewer significant digits
 * (opts.shorten(value, digits): 3, then 2); when even those do not fit, no numbers at all
 * (numbers that run together cannot be read; the hover text has every value).
 * Returns { text, size, digits (null: the format's own) } or null.
 */
function cellValues(z, cellW, cellH, size, opts) {
  const min = Math.min(size, px(9));
  const tall = Math.floor(cellH / 1.25); // the font that fits a cell's height
  const formats = [[null, opts.format]];
  if (opts.shorten) for (const digits of SHORTER) formats.push([digits, (v) => opts.shorten(v, digits)]);
  for (const [digits, format] of formats) {
    const text = z.map((row) => row.map((v) => format(v)));
    const widest = Math.max(0, ...text.flat().map((s) => textWidth(s, size)));
    const fit = widest > 0 ? Math.floor((size * (cellW - CELL_PAD)) / widest) : size;
    const font = Math.min(size, fit, tall);
    if (font >= min) return { text, size: font, digits };
  }
  return null;
}

/** The smallest plot area (px) Plotly's automargin may leave a heatmap (Plotly: 64). */
const MIN_AREA = 36;
/** Below this width (px), a heatmap that prints its numbers draws no colour bar. */
const SCALE_ROOM = 200;
/** Significant digits tried, in order, when a heatmap's numbers do not fit their cells (rules.json). */
const SHORTER = CELL_NUMBERS.digits.slice(1);
/** Room a cell keeps free beside its number (px, both sides together; rules.json). */
const CELL_PAD = CELL_NUMBERS.pad;

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

