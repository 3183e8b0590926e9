// Plotly charts. Each function takes a container and data, and draws with Plotly.react so
// that repeated updates reuse the existing plot. No DOM lookups and no fetches; the only
// state is per container: what it shows, and a redraw waiting for it to scroll into view.
// Split by job (static/js/charts/): common.js (colours, config, fonts, base layout),
// redraw.js (skip unchanged, defer off-screen, redraw on resize), heatmap.js, bars.js
// (bars, histograms, lines), room.js (a heatmap's margins and the columns it fits),
// repaint.js and repaint-bars.js (new values in a drawn figure, by Plotly's own steps). This module keeps the one import path every view uses.
export { ACCENT, CONFIG, DIVERGING, forgetSizes, MUTED, px, SEQUENTIAL, SERIES, setFontScale, sizeOf } from "./charts/common.js";
export { clearChart, drawDeferred, inSight } from "./charts/redraw.js";
export { columnWindow, heatmap, levelTitles, maxAbs, robustRange } from "./charts/heatmap.js";
export { columnsThatFit, overflows } from "./charts/room.js";
export { bars, binnedHistogram, histogram, lines } from "./charts/bars.js";
