// Bar charts, histograms and lines (series on shared axes).
import { categoryTicks, fitting, linearDtick, rowFont, textWidth } from "../fit.js";
import { ACCENT, axis, baseLayout, logTicks, MUTED, px, react, shortLabels, sizeOf } from "./common.js";
import { unchanged, whenVisible } from "./redraw.js";
import { repaintBars, repaintHistogram } from "./repaint-bars.js";

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

/**
 * The value axis of horizontal bars, with room at each end for the values printed outside
 * the bars (a negative bar's value sits left of it: without room it would cover the names
 * on the axis). `texts`: the printed values, or null when none are printed.
 */
function valueRange(y, plotW, texts) {
  const lo = Math.min(0, ...y);
  const hi = Math.max(0, ...y);
  const span = Math.max(hi - lo, 1e-12);
  if (!texts) return [lo < 0 ? lo - 0.05 * span : 0, hi + 0.05 * span];
  const textPx = Math.max(...texts.map((s) => textWidth(s, px(11)))) + 6;
  const ends = (lo < 0 ? 1 : 0) + (hi > 0 || lo === 0 ? 1 : 0);
  const perPx = span / Math.max(plotW * 0.3, plotW - ends * textPx);
  return [lo < 0 ? lo - textPx * perPx : 0, hi > 0 || lo === 0 ? hi + textPx * perPx : 0];
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
    // every bar named, in a smaller font when the names would crowd
    const rowF = rowFont(labels.length, plotH, size, Math.min(size, px(9)));
    const ticks = categoryTicks(labels, rowF.all ? labels.length : fitting(plotH, lineH * 1.05, 1));
    const byLabel = new Map(labels.map((l, i) => [l, short[i]]));
    Object.assign(trace, { orientation: "h", x: y, y: labels,
      hovertemplate: `${opts.xTitle} %{y}<br>${opts.yTitle} %{x:.4~g}<extra></extra>` });
    const range = opts.yRange ?? valueRange(y, plotW, showText ? opts.text : null);
    layout = baseLayout(el, opts.title, {
      xaxis: axis(opts.yTitle, plotW, { small: h < 150, range, nticks: fitting(plotW, size * 4, 2) }),
      yaxis: axis("", plotH, { type: "category", autorange: "reversed", ...ticks,
        ticktext: ticks.tickvals.map((v) => byLabel.get(v)), ...(rowF.size < size ? { tickfont: { size: rowF.size } } : {}) }),
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
  // New sizes on the same frame (a seed, a perturbation: the sparsity bars on their fixed
  // 0-1.1 axis): the bars and their printed values repainted, the axes and layout kept.
  const frame = barFrame(trace, layout);
  if (el.ffnFrame === frame && repaintBars(el, trace)) return Promise.resolve(el);
  el.ffnFrame = frame;
  return react(el, [trace], layout);
}

/** Everything a bar chart draws except its bars' sizes and printed values. */
function barFrame(trace, layout) {
  const { [trace.orientation === "h" ? "x" : "y"]: sizes, text, ...look } = trace;
  return JSON.stringify([look, Boolean(text), sizes.length, layout]);
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
  const layout = zeroLineLayout(el, opts);
  // New counts over new edges (a seed, a perturbation) in the same frame: the bars and both
  // axes drawn by Plotly's own steps, the titles, margins and layout kept.
  const { x, y, width, customdata, ...look } = trace;
  const frame = JSON.stringify([look, x.length, layout]);
  if (el.ffnFrame !== frame) {
    el.ffnFrame = frame;
    return react(el, [trace], layout);
  }
  return repaintHistogram(el, trace).then((done) => (done ? el : react(el, [trace], layout)));
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
 * xType, filename, xRange, yRange, integerY (a count: whole-number ticks) }. The legend stands
 * right of the plot, clear of the axis titles, or in one or two rows below it when beside it
 * would take more than a third of the width.
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
  const named = series.filter((s) => s.name);
  const itemW = Math.max(0, ...named.map((s) => textWidth(s.name, px(11)))) + 40;
  // Beside the plot while it takes at most a third of the width; else (larger text, long
  // names, a narrow column) in rows below the plot, which keeps its width, when two rows
  // hold it (more rows would take the plot's height instead, and Plotly would scroll them).
  const perRow = Math.max(1, Math.floor((w - 16) / itemW));
  const below = itemW > w / 3 && named.length <= 2 * perRow;
  const legendH = below ? Math.ceil(named.length / perRow) * px(11) * 1.7 + 8 : 0;
  const plotW = Math.max(40, w - (below ? 0 : itemW) - size * 5);
  const plotH = Math.max(30, h - size * 5 - 20 - legendH);
  const xs = series.flatMap((t) => t.x);
  const xTicks = { nticks: fitting(plotW, size * 4.5, 2) };
  if ((opts.xType ?? "linear") === "linear" && xs.length) {
    // at least two numbers on the axis, however narrow the plot (beside its legend)
    const [lo, hi] = opts.xRange ?? [Math.min(...xs), Math.max(...xs)];
    const dtick = linearDtick(lo, hi, xTicks.nticks);
    if (dtick) Object.assign(xTicks, { tickmode: "linear", tick0: 0, dtick });
  }
  const yTicks = { nticks: fitting(plotH, size * 2.5, 2) };
  if (opts.integerY) {
    // a count (dead units): ticks on whole numbers only, never 0.2 of a unit
    const ys = series.flatMap((t) => t.y);
    const [lo, hi] = opts.yRange ?? [Math.min(0, ...ys), Math.max(1, ...ys)];
    const dtick = Math.max(1, Math.ceil(linearDtick(lo, hi, yTicks.nticks) ?? 1));
    Object.assign(yTicks, { tickmode: "linear", tick0: 0, dtick, tickformat: "d" });
  }
  const layout = baseLayout(el, opts.title, {
    xaxis: axis(opts.xTitle, plotW * 0.85, { small: h < 150, type: opts.xType ?? "linear", zeroline: true,
      range: opts.xRange, ...xTicks, ...logTicks(opts.xType, xs) }),
    yaxis: axis(opts.yTitle, plotH, { small: w < 170, type: opts.yType ?? "linear", range: opts.yRange,
      ...yTicks, ...logTicks(opts.yType, series.flatMap((t) => t.y)) }),
    legend: below
      // at the container's foot: Plotly reserves its height, the x axis's labels above it
      ? { orientation: "h", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container", font: { size: px(11) } }
      // beside: a letter's width clear of the plot, so that a line ending at the plot's
      // top-right corner does not run on into the first entry's sample line
      : { orientation: "v", x: 1 + size / plotW, xanchor: "left", y: 1, yanchor: "top", font: { size: px(11) } },
    // a lone named line keeps its legend too (Plotly hides it): "ReLU, lr 1" must be said
    showlegend: series.some((s) => s.name),
  });
  el.dataset.traces = String(traces.length);
  return react(el, traces, layout);
}

