// A drawn heatmap given new values, or new rows, in the same frame: drawn by Plotly's own
// steps for what changed (the cells, the colour bar, the y axis) instead of a whole
// Plotly.react of the figure (docs/page-speed.md, "Redraws"). static/js/charts/heatmap.js
// decides which applies; these put the new numbers where Plotly keeps them and run the steps.
/* global Plotly */

/** New values in a drawn heatmap of the same frame: z, its colour range and the colour
 * bar's ticks only; the colour bar is updated only when its range changed. */
export async function restyleValues(el, trace) {
  if (await repaintValues(el, trace)) return el;
  const old = el.data[0];
  const update = { z: [trace.z] };
  if (old.zmin !== trace.zmin || old.zmax !== trace.zmax) {
    Object.assign(update, { zmin: [trace.zmin], zmax: [trace.zmax] });
    // signed bars name their ticks ("+1", "0", "−1"); sequential ones keep Plotly's
    if (trace.colorbar.tickvals) {
      update["colorbar.tickvals"] = [trace.colorbar.tickvals];
      update["colorbar.ticktext"] = [trace.colorbar.ticktext];
    }
  }
  await Plotly.restyle(el, update, [0]);
  return el;
}

/**
 * New values of the same shape drawn by Plotly's own heatmap layer alone. Any new z given to
 * Plotly (restyle or react) runs its whole plot again (defaults, axes and their labels,
 * colour bar, automargin, then the cells: ~10 ms per heatmap on a laptop), though only the
 * cells changed. Here the trace's values are replaced where Plotly keeps them (the figure's
 * data, its full trace, and the calculated data its hover text reads), the colour bar alone
 * is redrawn when its range changed (a restyle of its ticks: Plotly's colour-bar step only),
 * and the heatmap module's own `plot` paints the cells into the drawn layer, as Plotly's full
 * plot would. `plotly_afterplot` follows, as after any Plotly redraw.
 * Returns false (nothing changed) when the drawn figure is not one this can repaint: the
 * caller then gives the values to Plotly.restyle.
 * Source: plotly.js src/traces/heatmap/plot.js and src/plots/cartesian/index.js (plotOne).
 */
async function repaintValues(el, trace) {
  const full = el._fullData?.[0];
  const cd = el.calcdata?.[0];
  const plotinfo = el._fullLayout?._plots?.xy;
  const layer = plotinfo?.plot?.select?.("g.heatmaplayer");
  const paint = full?._module?.plot;
  const old = el.data?.[0];
  const rows = trace.z.length;
  const cols = rows ? trace.z[0].length : 0;
  if (!old || !cd?.[0]?.z || !layer || layer.empty() || typeof paint !== "function" || typeof el.emit !== "function"
    || full.type !== "heatmap" || cd[0].z.length !== rows || (cd[0].z[0]?.length ?? 0) !== cols) return false;
  // the calculated values as Plotly's calc keeps them (clean2dArray: a non-number is a gap)
  cd[0].z = trace.z.map((row) => Array.from(row, (v) => (Number.isFinite(v) ? v : undefined)));
  old.z = trace.z;
  full.z = trace.z;
  if (old.zmin !== trace.zmin || old.zmax !== trace.zmax) {
    Object.assign(old, { zmin: trace.zmin, zmax: trace.zmax });
    old.colorbar = trace.colorbar;
    const drawColorBars = Plotly.subroutines?.doColorBars;
    if (drawColorBars) {
      // The page's plotly.js (scripts/build-plotly.mjs): the new range and ticks go where
      // Plotly's defaults put them (the full trace), and Plotly's colour-bar step draws
      // the colour bar from them; a restyle would supply the whole figure's defaults first.
      Object.assign(full, { zmin: trace.zmin, zmax: trace.zmax });
      setBarTicks(full, trace);
      if (full.showscale) await drawColorBars(el);
    } else {
      // the colour bar's own edit (Plotly: editType "colorbars"); its new range comes with
      // the trace's defaults, which Plotly supplies again from the data set above
      const bar = trace.colorbar.tickvals
        ? { "colorbar.tickvals": [trace.colorbar.tickvals], "colorbar.ticktext": [trace.colorbar.ticktext] }
        : { "colorbar.nticks": [trace.colorbar.nticks] };
      await Plotly.restyle(el, bar, [0]);
    }
  }
  // for the tests: values drawn by this path
  if (paintCells(el, paint)) el.ffnRepaints = (el.ffnRepaints ?? 0) + 1;
  return true;
}

/** The new range's colour-bar ticks where Plotly's defaults put them (the full trace):
 * named ticks of a signed bar, Plotly's own number of them for a sequential one. */
function setBarTicks(full, trace) {
  if (full.colorbar && trace.colorbar.tickvals) {
    Object.assign(full.colorbar, { tickvals: trace.colorbar.tickvals, ticktext: trace.colorbar.ticktext });
  } else if (full.colorbar) {
    full.colorbar.nticks = trace.colorbar.nticks;
  }
}

/**
 * The cells painted by the heatmap module's `plot` into the drawn layer, from the figure's
 * calculated data, then `plotly_afterplot`, as after any Plotly redraw. False when there is
 * no drawn layer: the colour bar or the axis drew the whole figure again meanwhile (new
 * margins), cells included.
 */
function paintCells(el, paint) {
  const plotinfo = el._fullLayout?._plots?.xy;
  const layer = plotinfo?.plot?.select?.("g.heatmaplayer");
  if (!plotinfo || !layer || layer.empty() || !el.calcdata?.[0]) return false;
  el._hmpixcount = 0; // the mean colour (Plotly's zoom box reads it) is counted again
  el._hmlumcount = 0;
  paint(el, plotinfo, [el.calcdata[0]], layer);
  el.emit("plotly_afterplot");
  return true;
}

/**
 * Numbered rows' y axis drawn without measuring its labels. Their room is fixed: every
 * number is as wide as the widest the plot may show (heatmap.js rowNumbers; a new width is
 * a new frame, drawn whole). So the labels' box Plotly measures for its automargin and the
 * title's standoff (a layout of the page per plot and step, during a drag too) is the one
 * it measured at the last whole draw, and the margin it pushed stays. For this draw only,
 * the axis's `automargin` and title standoff are set aside (plotly.js
 * src/plots/cartesian/axes.js drawOne: `getLabelLevelBbox` runs for either), the figure
 * counts as replotting (src/plots/plots.js autoMargin: no margins computed again), and the
 * axis's margin push, which drawOne drops without an automargin, is put back.
 */
async function drawRowNumbers(el, ya, steps) {
  const fullLayout = el._fullLayout;
  const id = `${ya._id}.automargin`;
  const push = fullLayout._pushmargin?.[id];
  const pushId = fullLayout._pushmarginIds?.[id];
  const { automargin, title } = ya;
  const { standoff, ...unmeasured } = title ?? {};
  const replotting = fullLayout._replotting;
  ya.automargin = false;
  ya.title = unmeasured;
  fullLayout._replotting = true;
  try {
    await steps.drawAxes(el, [ya._id], { skipTitle: true });
  } finally {
    ya.automargin = automargin;
    ya.title = title;
    fullLayout._replotting = replotting;
    if (push && fullLayout._pushmargin) fullLayout._pushmargin[id] = push;
    if (pushId && fullLayout._pushmarginIds) fullLayout._pushmarginIds[id] = pushId;
  }
}

/**
 * New rows (a Tokens step) drawn by Plotly's own steps for what changed: the cells, the y
 * axis and the colour bar. Plotly.react of the new figure would supply the whole figure's
 * defaults, lay out and draw both axes, the colour bar and the margins again and read the
 * plot's size (~60 ms per heatmap on a phone's CPU), though the x axis, the titles and the
 * margins stay. Here the new values, row names and y ticks are put where Plotly keeps them
 * (the figure's data and layout, the full trace and axis), the heatmap module's calc makes
 * the calculated data again (row edges and names, as for any new figure), Plotly's autorange
 * and drawing of the y axis alone follow (as in its pan and zoom), then its colour-bar step
 * when the range changed and the heatmap module's `plot`. A y axis whose labels need other
 * margins moves them with Plotly's automargin, which draws the whole figure again, as a
 * react would (numbered rows keep the room of their widest number: heatmap.js rowNumbers).
 * Resolves false (nothing changed) when the drawn figure is not one this can repaint or
 * the page's plotly.js does not have these steps (the caller then gives it to Plotly.react).
 * Source: plotly.js src/plots/plots.js (doCalcdata), src/plots/cartesian/axes.js (draw),
 * src/plots/cartesian/autorange.js (doAutoRange), src/traces/heatmap/calc.js and plot.js.
 */
export async function repaintRows(el, trace, layout) {
  const steps = Plotly.subroutines;
  const full = el._fullData?.[0];
  const fullLayout = el._fullLayout;
  const ya = fullLayout?.yaxis;
  const old = el.data?.[0];
  const yaxis = el.layout?.yaxis;
  if (!steps?.drawAxes || !steps.doAutoRange || !steps.doColorBars || !old || !yaxis || !ya
    || full?.type !== "heatmap" || typeof full._module?.calc !== "function" || typeof full._module.plot !== "function"
    || typeof ya.clearCalc !== "function" || typeof el.emit !== "function" || !el.calcdata?.[0]) return false;
  // the colour bar depends on the range alone here (its place and length are the frame's)
  const newRange = old.zmin !== trace.zmin || old.zmax !== trace.zmax;
  // the figure's data and layout, as a react of the new figure would leave them
  Object.assign(old, { z: trace.z, zmin: trace.zmin, zmax: trace.zmax, colorbar: trace.colorbar });
  if (trace.y) old.y = trace.y;
  const rowAxis = layout.yaxis;
  for (const key of ["tickvals", "ticktext", "dtick"]) {
    if (key in rowAxis) yaxis[key] = rowAxis[key];
  }
  el.layout.uirevision = layout.uirevision;
  fullLayout.uirevision = layout.uirevision;
  // ... and where Plotly's defaults put them
  Object.assign(full, { z: trace.z, zmin: trace.zmin, zmax: trace.zmax });
  if (trace.y) full.y = trace.y;
  setBarTicks(full, trace);
  for (const key of ["tickvals", "ticktext", "dtick"]) {
    if (key in rowAxis) ya[key] = rowAxis[key];
  }
  // the calculated data, as Plotly's calc makes it: the y axis's categories from scratch
  ya.clearCalc();
  full._extremes = {};
  const cd = full._module.calc(el, full);
  if (!cd[0].t) cd[0].t = {};
  cd[0].trace = full;
  el.calcdata[0] = cd;
  steps.doAutoRange(el, ya);
  // the y axis drawn as Plotly's pan and zoom draw it (dragbox.js: drawOne, skipTitle): the
  // labels that stay (the same number at the same row) keep their nodes and are placed
  // again, new ones are added and gone ones removed
  if (trace.y) await steps.drawAxes(el, [ya._id], { skipTitle: true });
  else await drawRowNumbers(el, ya, steps);
  // the y axis's labels moved the margins (wider row names: a panel's rows named 0 to T-1
  // at 10 rows, tokens): Plotly's automargin then drew the whole figure again from its data
  // and layout, set above (its own new full trace).
  // Such a redraw leaves `plotly_afterplot` to the call it ran in (plot_api.js
  // emitAfterPlot): this one.
  const redrawn = el._fullData?.[0] !== full || el.calcdata?.[0] !== cd;
  if (redrawn) {
    el.emit("plotly_afterplot");
  } else {
    if (full.showscale && newRange) await steps.doColorBars(el);
    paintCells(el, full._module.plot);
  }
  el.ffnRowRepaints = (el.ffnRowRepaints ?? 0) + 1; // for the tests: new rows drawn from here
  return true;
}
