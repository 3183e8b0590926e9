// Plotly charts. Each function takes a container and data, and draws with Plotly.react so
// that repeated updates reuse the existing plot. No DOM lookups and no fetches; the only
// state is per container: what it shows, and a redraw waiting for it to scroll into view.
/* global Plotly */

// ColorBrewer RdBu (colour-blind safe), blue < 0 < red, white at exactly 0.
export const DIVERGING = [
  [0.0, "#2166ac"], [0.125, "#4393c3"], [0.25, "#92c5de"], [0.375, "#d1e5f0"],
  [0.5, "#f7f7f7"],
  [0.625, "#fddbc7"], [0.75, "#f4a582"], [0.875, "#d6604d"], [1.0, "#b2182b"],
];
export const ACCENT = "#2166ac";
export const MUTED = "#b2182b";

// No modebar: its "share" button uploads to Plotly's cloud (nothing leaves the server), it
// covers titles and hover labels, and the page has its own PNG/SVG buttons
// (static/js/export/index.js, Plotly.downloadImage).
export const CONFIG = { displayModeBar: false, displaylogo: false, responsive: true };
let fontScale = 1;

/** Scale every chart's fonts (the lesson's "larger fonts for the back row"); 1 is normal. */
export function setFontScale(scale) {
  fontScale = scale;
}

function baseLayout(extra) {
  return {
    margin: { l: 48, r: 12, t: 36, b: 40 },
    font: { family: "system-ui, sans-serif", size: Math.round(12 * fontScale), color: "#1a1a1a" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    ...extra,
  };
}

function config() {
  return CONFIG;
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
function whenVisible(el, draw) {
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
 * True when `el` already shows exactly this data with these options, so that a redraw can
 * be skipped (a Plotly.react costs ~10 ms per chart even when nothing changed). `data` is
 * compared by identity, `opts` by value (functions ignored).
 */
function unchanged(el, data, opts) {
  const key = JSON.stringify([opts, fontScale]); // a new font scale redraws
  if (el.ffnDrawn && el.ffnDrawn.data === data && el.ffnDrawn.key === key) return true;
  el.ffnDrawn = { data, key };
  return false;
}

/**
 * A signed heatmap [rows x cols] with a symmetric colour range around 0.
 * opts: { title, xTitle, yTitle, zmax, yLabels, xLabels, filename, showValues, format }
 * xLabels: the column names when z holds only some columns (e.g. the kept unit indices of
 * a summarised hidden layer); the x axis is then categorical.
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
 * For display only: at most `limit` columns, each the signed value of largest |value| in a
 * run of consecutive columns (so no extreme disappears), labelled "first–last".
 * A chart a few hundred pixels wide cannot show more columns than that anyway.
 */
export function binColumns(z, labels, limit) {
  const cols = z.length ? z[0].length : 0;
  if (cols <= limit) return { z, labels, columns: null };
  const width = Math.ceil(cols / limit);
  const starts = [];
  for (let c = 0; c < cols; c += width) starts.push(c);
  const name = (c) => (labels ? labels[c] : String(c));
  const columns = []; // columns[row][bin]: the column whose value the cell shows
  const binned = z.map((row) => {
    const chosen = [];
    const values = starts.map((start) => {
      let at = start;
      for (let c = start + 1; c < Math.min(start + width, cols); c += 1) {
        if (Math.abs(row[c]) > Math.abs(row[at])) at = c;
      }
      chosen.push(labels ? Number(labels[at]) : at);
      return row[at];
    });
    columns.push(chosen);
    return values;
  });
  return {
    z: binned,
    labels: starts.map((start) => `${name(start)}–${name(Math.min(start + width, cols) - 1)}`),
    columns,
  };
}

const DISPLAY_COLUMNS = 256;

/** Readable x ticks: whole numbers for a few columns, at most ~6 labels for named columns. */
function xTicks(labels, cols) {
  if (!labels) return cols <= 16 ? { dtick: cols <= 8 ? 1 : 2 } : {};
  if (labels.length <= 8) return {};
  const step = Math.ceil(labels.length / 6);
  const shown = labels.filter((_, i) => i % step === 0);
  return { tickvals: shown, ticktext: shown };
}

function drawHeatmap(el, zFull, rows, cols, opts) {
  const shown = binColumns(zFull, opts.xLabels, DISPLAY_COLUMNS);
  const z = shown.z;
  const xLabels = shown.labels;
  const zmax = opts.zmax ?? maxAbs(z);
  const trace = {
    type: "heatmap",
    z,
    zmin: -zmax,
    zmax,
    zmid: 0,
    colorscale: DIVERGING,
    showscale: opts.showScale ?? true,
    colorbar: { thickness: 8, tickformat: "+.2~g", outlinewidth: 0 },
    hovertemplate: `${opts.yTitle} %{y}<br>${opts.xTitle} %{x}<br>%{z:+.4~g}<extra></extra>`,
  };
  if (opts.yLabels) {
    trace.y = opts.yLabels;
  }
  if (xLabels) {
    trace.x = xLabels;
  }
  if (shown.columns) {
    // A click or hover names the real column (hidden unit) behind a binned cell.
    trace.customdata = shown.columns;
    trace.hovertemplate = `${opts.yTitle} %{y}<br>${opts.xTitle} %{customdata}<br>%{z:+.4~g}<extra></extra>`;
  }
  if (opts.showValues && opts.format) {
    trace.text = z.map((row) => row.map(opts.format));
    trace.texttemplate = "%{text}";
    trace.textfont = { size: 12 };
  }
  const layout = baseLayout({
    title: { text: opts.title, font: { size: Math.round(13 * fontScale) } },
    xaxis: { title: { text: opts.xTitle }, showgrid: false, zeroline: false,
             type: xLabels ? "category" : "linear", ...xTicks(xLabels, cols) },
    margin: { l: opts.showYTitle === false ? 28 : 48, r: 8, t: 36, b: 40 },
    yaxis: { title: { text: opts.showYTitle === false ? "" : opts.yTitle }, autorange: "reversed", showgrid: false, zeroline: false,
             type: opts.yLabels ? "category" : "linear", dtick: rows <= 16 ? 1 : undefined },
    uirevision: `${rows}x${cols}`,
  });
  return Plotly.react(el, [trace], layout, config(opts.filename));
}

/**
 * A bar chart. opts: { title, xTitle, yTitle, text, colors, filename, yRange }
 */
const BAR_LABELS = 16; // more bars than this: values on hover only (labels would overlap)

export function bars(el, x, y, opts) {
  if (unchanged(el, y, { ...opts, x })) return Promise.resolve(el);
  return whenVisible(el, () => drawBars(el, x, y, opts));
}

function drawBars(el, x, y, opts) {
  const trace = {
    type: "bar",
    x,
    y,
    marker: { color: opts.colors ?? ACCENT },
    text: x.length <= BAR_LABELS ? opts.text : undefined,
    textposition: "outside",
    cliponaxis: false,
    hovertemplate: `${opts.xTitle} %{x}<br>${opts.yTitle} %{y:.4~g}<extra></extra>`,
  };
  const layout = baseLayout({
    title: { text: opts.title, font: { size: Math.round(13 * fontScale) } },
    xaxis: { title: { text: opts.xTitle }, type: "category" },
    yaxis: { title: { text: opts.yTitle }, range: opts.yRange, rangemode: "tozero" },
  });
  return Plotly.react(el, [trace], layout, config(opts.filename));
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
  const layout = zeroLineLayout(opts);
  return Plotly.react(el, [trace], layout, config(opts.filename));
}

/** The layout of both histograms: bars with a vertical line at zero. */
function zeroLineLayout(opts) {
  return baseLayout({
    title: { text: opts.title, font: { size: Math.round(13 * fontScale) } },
    xaxis: { title: { text: opts.xTitle }, zeroline: false },
    yaxis: { title: { text: opts.yTitle } },
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
  const layout = zeroLineLayout(opts);
  return Plotly.react(el, [trace], layout, config(opts.filename));
}

/**
 * Lines and point clouds on shared axes. series: [{ x, y, name, mode: "lines"|"markers",
 * color, dash, size, opacity }]. opts: { title, xTitle, yTitle, yType ("linear"|"log"),
 * xType, filename, yRange }
 */
export function lines(el, series, opts) {
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
  const layout = baseLayout({
    title: { text: opts.title, font: { size: Math.round(13 * fontScale) } },
    xaxis: { title: { text: opts.xTitle }, type: opts.xType ?? "linear", zeroline: true },
    yaxis: { title: { text: opts.yTitle }, type: opts.yType ?? "linear", range: opts.yRange },
    legend: { orientation: "h", x: 0, y: -0.3, yanchor: "top" },
    margin: { l: 56, r: 12, t: 36, b: 96 },
  });
  el.dataset.traces = String(traces.length);
  return Plotly.react(el, traces, layout, config(opts.filename));
}

/** Series colours for side-by-side comparisons (ColorBrewer Dark2, colour-blind friendly). */
export const SERIES = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];
