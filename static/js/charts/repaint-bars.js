// A drawn bar chart or binned histogram given new values in the same frame: drawn by
// Plotly's own steps for what changed (the bars, and the axes when their range moves)
// instead of a whole Plotly.react of the figure (docs/page-speed.md, "Redraws"), as
// static/js/charts/repaint.js does for a heatmap. static/js/charts/bars.js decides which
// applies; these put the new numbers where Plotly keeps them and run the steps.
/* global Plotly */

/**
 * New sizes and printed values of the same bars (one trace, the same positions, a fixed
 * value axis), drawn by Plotly's own bar layer alone, as `repaintValues` does for a heatmap
 * (static/js/charts/repaint.js): a new y given to Plotly (restyle or react) runs its whole
 * plot again, axes and tick labels, margins, then the bars. Here the sizes replace the old
 * ones where Plotly keeps them (the figure's data; its full trace, whose text Plotly
 * prints; the calculated data: each bar's size `s`, which hover reads, its top, its far
 * end `s1`, which the drawing reads, and its text `tx`), the bar module's own `plot` draws
 * the bars and their texts in the drawn layer and its `style` styles them;
 * `plotly_afterplot` follows. Returns false (nothing changed) when the drawn
 * figure is not one this can repaint: the caller then gives it to Plotly.react.
 * Source: plotly.js src/traces/bar/calc.js, cross_trace_calc.js (setBaseAndTop,
 * collectExtents), plot.js, style.js.
 */
export function repaintBars(el, trace) {
  const full = el._fullData?.[0];
  const cd = el.calcdata?.[0];
  const plotinfo = el._fullLayout?._plots?.xy;
  const layer = plotinfo?.plot?.select?.("g.barlayer");
  const old = el.data?.[0];
  const paint = full?._module?.plot;
  const style = full?._module?.style;
  const sLetter = trace.orientation === "h" ? "x" : "y";
  const sizes = trace[sLetter];
  const axis = el._fullLayout?.[sLetter === "x" ? "xaxis" : "yaxis"];
  if (!old || !cd || !layer || layer.empty() || typeof paint !== "function" || typeof style !== "function"
    || typeof el.emit !== "function" || el.data.length !== 1 || full.type !== "bar" || axis?.autorange !== false
    || cd.length !== sizes.length || !sizes.every(Number.isFinite) || !cd.every((di) => di.b === 0)) return false;
  old[sLetter] = sizes;
  full[sLetter] = sizes;
  old.text = trace.text;
  full.text = trace.text;
  cd.forEach((di, i) => {
    di.s = sizes[i];
    di[sLetter] = di.b + sizes[i]; // the bar's top (setBaseAndTop)
    di.s1 = di.s0 + sizes[i]; // its far end (collectExtents)
    if (trace.text) di.tx = trace.text[i];
  });
  paint(el, plotinfo, [cd], layer);
  style(el);
  el.ffnRepaints = (el.ffnRepaints ?? 0) + 1; // for the tests: values drawn by this path
  el.emit("plotly_afterplot");
  return true;
}

/**
 * New counts over new edges of a binned histogram (one vertical bar trace on linear axes
 * that range themselves, the same number of bins), drawn by Plotly's own steps, as its pan
 * and zoom draw a new range: a new x given to Plotly (restyle or react) supplies the whole
 * figure's defaults again, lays out the titles and margins and draws everything, though
 * only the bars and the axes' ranges changed (~20 ms per step at 1920x1080, the largest
 * share of a value step there). Here the bins' centres, counts, width and edges (hover
 * reads them) replace the old ones where Plotly keeps them (the figure's data and its full
 * trace); the bar module's `calc` and `crossTraceCalc` make the calculated data again (the
 * bars' places, sizes and extents), both axes range themselves (`doAutoRange`) and are
 * drawn (`drawAxes`, titles kept), then Plotly's drawing of the data draws the bars and the
 * zero line (a shape on the x axis) at the new scale. Tick labels that need other margins
 * move them with Plotly's automargin, which draws the whole figure again from the data set
 * here, as a react would. `plotly_afterplot` follows, as after any Plotly redraw.
 * Resolves false (nothing changed) when the drawn figure is not one this can repaint or the
 * page's plotly.js lacks these steps: the caller then gives it to Plotly.react.
 * trace: { x: centres [bins], y: counts [bins], width, customdata: [bins][2] edges }.
 * Source: plotly.js src/plots/plots.js (doCalcdata), src/traces/bar/calc.js and
 * cross_trace_calc.js, src/plot_api/plot_api.js (addAxRangeSequence), subroutines.js
 * (drawData).
 */
export async function repaintHistogram(el, trace) {
  const steps = typeof Plotly === "undefined" ? undefined : Plotly.subroutines;
  const full = el._fullData?.[0];
  const fullLayout = el._fullLayout;
  const plotinfo = fullLayout?._plots?.xy;
  const old = el.data?.[0];
  const { xaxis: xa, yaxis: ya } = fullLayout ?? {};
  const bins = trace.y.length;
  if (!steps?.drawAxes || !steps.doAutoRange || !steps.drawData || !old || !plotinfo || !xa || !ya
    || typeof el.emit !== "function" || el.data.length !== 1 || full?.type !== "bar" || full.orientation !== "v"
    || typeof full._module?.calc !== "function" || typeof full._module.crossTraceCalc !== "function"
    || xa.type !== "linear" || ya.type !== "linear" || !xa.autorange || !ya.autorange
    || full._length !== bins || trace.x.length !== bins || el.calcdata?.[0]?.length !== bins
    || ![...trace.x, ...trace.y, trace.width].every(Number.isFinite)) return false;
  // the figure's data, as a react of the new figure would leave it, and where Plotly's
  // defaults put it
  for (const target of [old, full]) {
    Object.assign(target, { x: trace.x, y: trace.y, width: trace.width, customdata: trace.customdata });
  }
  // the calculated data, as Plotly's calc makes it: the bars, then their places and extents
  full._extremes = {};
  const cd = full._module.calc(el, full);
  if (!cd[0].t) cd[0].t = {};
  cd[0].trace = full;
  el.calcdata[0] = cd;
  full._module.crossTraceCalc(el, plotinfo);
  // both axes ranged and drawn as Plotly's pan and zoom draw them (tick labels that stay
  // keep their nodes)
  steps.doAutoRange(el, xa);
  steps.doAutoRange(el, ya);
  await steps.drawAxes(el, [xa._id, ya._id], { skipTitle: true });
  // new margins: Plotly's automargin drew the whole figure again from the data set above,
  // and left `plotly_afterplot` to the call it ran in (plot_api.js emitAfterPlot): this one
  if (el._fullData?.[0] === full && el.calcdata?.[0] === cd) {
    await steps.drawData(el);
    el.ffnRepaints = (el.ffnRepaints ?? 0) + 1; // for the tests: values drawn by this path
  }
  el.emit("plotly_afterplot");
  el.ffnBinRepaints = (el.ffnBinRepaints ?? 0) + 1; // for the tests: new bins drawn from here
  return true;
}
