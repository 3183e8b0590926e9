// The page's plotly.js: plotly.js's core (scatter, cartesian axes, colour bars, hover,
// PNG/SVG export) and the trace types the page draws (bar, heatmap, histogram), built from
// the npm package's sources by esbuild, as plotly.js's README describes for a custom bundle
// ("load the core module and register the trace modules you need"). Both are pinned in
// package-lock.json. Run by scripts/setup after `npm ci`; app/api/assets.py serves the file.
//
//   node scripts/build-plotly.mjs                       # build/plotly/plotly.min.js
//   node scripts/build-plotly.mjs --unminified OUT.js   # the same bundle with its names, for
//                                                       # profiles (benchmarks.profile_browser)
//
// Why not npm's plotly.js-cartesian-dist-min: it also registers box, violin, contour,
// histogram2d, pie, image, ternary axes and world calendars, and registering the image
// trace alone (its PNG/JPEG size probe and a Node Buffer polyfill) took ~0.8 s of a phone's
// main thread as the page opened (390x844, Chromium's CPU slowdown 4x).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The trace types registered beside the core's scatter (tests/browser/test_plotly_bundle.py
 * checks that every type the page's scripts use is one of them). */
export const TRACES = ["bar", "heatmap", "histogram"];

const args = process.argv.slice(2);
const unminified = args[0] === "--unminified";
const outfile = unminified ? args[1] : join(ROOT, "build", "plotly", "plotly.min.js");
if (!outfile) {
  console.error("usage: node scripts/build-plotly.mjs [--unminified OUT.js]");
  process.exit(2);
}
const { version } = JSON.parse(readFileSync(join(ROOT, "node_modules", "plotly.js", "package.json"), "utf8"));

await build({
  stdin: {
    contents: [
      'var Plotly = require("plotly.js/lib/core");',
      `Plotly.register([${TRACES.map((name) => `require("plotly.js/lib/${name}")`).join(", ")}]);`,
      // plotly.js's own steps of a plot, which its restyle and react run after supplying the
      // whole figure's defaults again: the colour-bar step, the axis steps (the autorange
      // of one axis, the drawing of some axes only) and the drawing of the data and of the
      // shapes on the axes. A heatmap's or a histogram's repaint (static/js/charts/repaint.js,
      // repaint-bars.js) sets its new values, rows and range where the defaults put them and
      // runs only the steps whose picture changed.
      'var steps = require("plotly.js/src/plot_api/subroutines");',
      'Plotly.subroutines = { doColorBars: steps.doColorBars, drawData: steps.drawData,',
      '  drawAxes: require("plotly.js/src/plots/cartesian/axes").draw,',
      '  doAutoRange: require("plotly.js/src/plots/cartesian/autorange").doAutoRange };',
      "module.exports = Plotly;",
    ].join("\n"),
    resolveDir: ROOT,
    sourcefile: "plotly-page.js",
  },
  outfile,
  bundle: true,
  format: "iife",
  globalName: "Plotly",
  minify: !unminified,
  // plotly.js's own build settings (its esbuild-config.js); the only CSS it imports is
  // maplibre's, for map subplots, which this bundle has none of
  target: "es2016",
  define: { global: "window", "define.amd": "false" },
  loader: { ".css": "empty" },
  legalComments: "eof",
  // the banner app/api/assets.py reads the version from, as in plotly.js's own bundles
  banner: { js: `/**\n* plotly.js (core, ${TRACES.join(", ")}${unminified ? "" : " - minified"}) v${version}\n* Copyright 2012-2025, Plotly, Inc.\n* All rights reserved.\n* Licensed under the MIT license\n*/` },
  logLevel: "warning",
});
console.log(`plotly.js ${version} (core, ${TRACES.join(", ")}) -> ${outfile}`);
