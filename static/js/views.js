// Rendering of the forward and perturbation answers: the flow, sparsity and perturbation
// charts with their captions and notes (the readout beside the flow: readout.js).
import { bars, binnedHistogram, columnsThatFit, forgetSizes, heatmap, histogram, inSight, levelTitles, maxAbs, overflows, robustRange, sizeOf } from "./charts.js";
import { CELL_NUMBERS } from "./charts/common.js";
import { count, magnitude, percent, signed, signedDigits } from "./format.js";
import { sentences, t } from "./i18n.js";
import { emit } from "./bus.js";
import { columnsFor, fitWindows } from "./windows.js";
import { caption, sameCaption, shapeText } from "./captions.js";
import { setAttr, setHidden, setText } from "./dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
// at or below this width, heatmaps print their numbers (rules.json, as the Python figures)
const HAND_SIZE = CELL_NUMBERS.hand_size;

/** The window ("units" or "features") whose columns tensor `key` of the flow has. */
const KIND = { input: "features", output: "features", pre_activation: "units", up: "units", hidden: "units" };

/** Train mode: how many units dropout set to 0 (marked × on the hidden heatmap), else hidden. */
function droppedNote(data) {
  const el = $("flow-dropped");
  if (!el) return;
  setHidden(el, !data.dropped);
  if (!data.dropped) return;
  const n = data.dropped.reduce((s, row) => s + row.filter(Boolean).length, 0);
  el.textContent = t("flow.dropped_note", { n, p: data.config.dropout });
  el.dataset.value = String(n);
}

/** What a heatmap says about a robust range that clipped cells (undefined when none). */
function clipOf(range) {
  if (!range?.cells.length) return undefined;
  const params = { x: magnitude(range.zmax), n: count(range.cells.length) };
  return { cells: range.cells, bar: t("clip.bar"), caption: t("clip.caption", params), note: t("clip.note", params) };
}

/**
 * The catalog keys of the flow's titles and arrows. Gated (SwiGLU, GeGLU): gate = x W_gate,
 * up = x W_up (the API's w_gate and w1), hidden = act(gate) ⊙ up, output = hidden W_down (w2).
 */
function flowKeys(gated, bias) {
  const b = bias ? "" : "_nobias";
  if (!gated) {
    return { heading: "flow.heading", pre: `flow.pre_activation${b}`, hidden: "flow.hidden",
      stepUp: `flow.step_up${b}`, stepAct: "flow.step_act", stepDown: `flow.step_down${b}` };
  }
  return { heading: "flow.heading_gated", pre: `flow.pre_activation_gated${b}`, up: `flow.up${b}`,
    hidden: "flow.hidden_gated", stepUp: "flow.step_up_gated", stepAct: "flow.step_act_gated",
    stepDown: `flow.step_down_gated${b}` };
}

/** The four (five, gated) heatmaps of the flow, left to right, with their shapes. */
export function renderFlow(data, { yLabels, rowsUpTo } = /** @type {{ yLabels?: string[], rowsUpTo?: number }} */ ({})) {
  const gated = data.config.gated;
  const small = data.config.d_model <= HAND_SIZE && data.config.d_ff <= HAND_SIZE;
  const common = { yTitle: t("axis.position"), yLabels, rowsUpTo, showValues: small, format: signed, shorten: signedDigits };
  const keys = flowKeys(gated, data.config.bias !== false);
  const stages = [
    ["input", t("flow.input"), t("axis.feature")],
    ["pre_activation", t(keys.pre), t("axis.unit")],
    ["hidden", t(keys.hidden), t("axis.unit")],
    ["output", t("flow.output"), t("axis.feature")],
  ];
  if (gated) stages.splice(2, 0, ["up", t(keys.up), t("axis.unit")]);
  setHidden($("stage-up"), !gated);
  setHidden($("flow-times"), !gated);
  // The arrows and the heading say what is computed (gated: gate, up, act(gate) ⊙ up, down);
  // data-i18n keeps them in the language the page switches to.
  for (const [id, key] of [["flow-heading", keys.heading], ["arrow-up", keys.stepUp],
    ["arrow-act", keys.stepAct], ["arrow-down", keys.stepDown]]) {
    const el = $(id);
    setAttr(el, "data-i18n", key);
    setText(el, t(key));
  }
  // Two rows when one would squeeze the plots: gated (five plots), token labels, larger text.
  const labelled = Boolean(yLabels);
  const wrap = Boolean(gated) || labelled || document.body.classList.contains("big");
  const flow = $("plot-input").closest(".flow");
  flow.classList.toggle("gated", Boolean(gated));
  flow.classList.toggle("wrap", wrap);
  forgetSizes(); // the plots may have changed size: read them again
  const firstInRow = wrap ? ["input", "hidden"] : ["input"];
  // A pretrained layer has outlier features far beyond the rest: colour by the 99th
  // percentile of |value| and mark the cells beyond, so one feature cannot blank the picture.
  const robust = Boolean(data.config.model);
  renderWeights(data);
  droppedNote(data);
  const shown = stages.map(([key, title, xTitle]) => {
    const narrow = key === "input" || key === "output";
    const first = firstInRow.includes(key);
    return {
      key,
      el: $(`plot-${key}`),
      opts: {
        ...common, title, xTitle, filename: `ffn-${key}`, showScale: robust || !narrow,
        showYTitle: first, indexTicks: !first,
        // train mode: the units dropout dropped (after the activation, before W2), marked ×
        marks: key === "hidden" && data.dropped ? data.dropped : undefined,
      },
    };
  });
  // Every caption first (they name the drawn columns), then the plots' sizes in one layout,
  // then each window's width (no more columns than the narrowest of its plots shows one per
  // pixel), then the drawing: a caption written after a size read made Plotly's first draw
  // lay the whole page out again. A caption is written twice only when its window changed.
  const parts = shown.map(({ key }) => {
    const columns = columnsFor(KIND[key], data, key);
    const range = robust ? robustRange(data[key]) : null;
    const clip = clipOf(range);
    caption($(`shape-${key}`), key, data, columns, clip);
    return { columns, range, clip };
  });
  const fit = {};
  for (const { key, el, opts } of shown) {
    if (!sizeOf(el).w) continue; // not laid out (an embed of one panel): no say
    const kind = KIND[key];
    fit[kind] = Math.min(fit[kind] ?? Infinity, columnsThatFit(el, data[key].length, opts, { measured: true }));
  }
  if (fitWindows(fit)) {
    shown.forEach(({ key }, i) => {
      const part = parts[i];
      const columns = columnsFor(KIND[key], data, key);
      const same = sameCaption(columns, part.columns);
      part.columns = columns;
      if (!same) caption($(`shape-${key}`), key, data, columns, part.clip);
    });
  }
  const plots = shown.map(({ key, el, opts }, i) => {
    const { columns, range, clip } = parts[i];
    return { el, z: data[key], opts: { ...opts, columns, zmax: range?.zmax, clip } };
  });
  // a token's row level across the plots of a row, whatever their x titles' lines
  const leveled = levelTitles(plots);
  return Promise.all(plots.map(({ el, z }, i) => heatmap(el, z, leveled[i]))).then((drawn) => {
    // Plotly laid a plot out narrower than estimated (wider tick or colour-bar labels): the
    // windows fit again from the plots as drawn, once per answer and size
    const key = `${window.innerWidth}x${window.innerHeight}`;
    if (refitted.get(data) !== key && shown.some(({ el }) => overflows(el))) {
      refitted.set(data, key);
      emit("redraw", { reason: "window" });
    }
    return drawn;
  });
}

/** The answers whose flow was fitted again after drawing, and at which window size. */
const refitted = new WeakMap();

/**
 * The weights of a hand-sized layer (the tiny preset) as matrices with their numbers, so
 * that x W₁ + b₁ can be checked on the board. Shown when the answer carries the weights
 * (include_weights) of a plain FFN with d_model, d_ff <= 8; hidden otherwise.
 */
export function renderWeights(data) {
  const box = $("flow-weights");
  const w = data.weights;
  const c = data.config;
  const show = Boolean(w && w.w1 && w.w2 && c.d_model <= HAND_SIZE && c.d_ff <= HAND_SIZE);
  setHidden(box, !show);
  // the flow's section knows it holds a second row of plots (a small embed shares its frame)
  box.closest("section").classList.toggle("has-weights", show);
  forgetSizes();
  if (!show) return Promise.resolve();
  const matrices = [
    ["w1", t("grid.w1"), w.w1, t("axis.feature"), t("axis.unit")],
    ["b1", t("grid.b1"), w.b1 ? [w.b1] : null, "", t("axis.unit")],
    ["w2", t("grid.w2"), w.w2, t("axis.unit"), t("axis.feature")],
    ["b2", t("grid.b2"), w.b2 ? [w.b2] : null, "", t("axis.feature")],
  ];
  // Each matrix as wide as its columns (+1 for its row labels): the tiny preset's 4 x 2 W2
  // narrower than its 2 x 4 W1 (5 : 5 : 3 : 3), a 4 x 4 W2 as wide as W1, so that its
  // cells have room for their numbers (app.css .weights-row).
  const tracks = matrices.filter(([, , z]) => z).map(([, , z]) => `minmax(0, ${z[0].length + 1}fr)`);
  box.style.setProperty("--weights-columns", tracks.join(" "));
  // One colour scale for the four: they have no colour bar (their numbers are printed), so
  // +1 must be the same red in W1, b1, W2 and b2.
  const zmax = Math.max(...matrices.filter(([, , z]) => z).map(([, , z]) => maxAbs(z)));
  return Promise.all(matrices.map(([name, label, z, yTitle, xTitle]) => {
    setHidden($(`stage-${name}`), !z);
    if (!z) return null;
    const el = $(`plot-${name}`);
    el.dataset.matrix = name;
    return heatmap(el, z, {
      title: shapeText(label, [z.length, z[0].length]),
      xTitle, yTitle, showValues: true, format: signed, shorten: signedDigits, showScale: false, zmax,
      yLabels: z.length === 1 ? [" "] : undefined, showYTitle: Boolean(yTitle), filename: `ffn-${name}`,
    });
  }));
}

/** Sparsity per token (bars), the pre-activation histogram, and the rule that was used. */
export function renderSparsity(data, { yLabels } = /** @type {{ yLabels?: string[] }} */ ({})) {
  const s = data.sparsity;
  setText($("sparsity-rule"),
    s.rule === "exact_zero" ? t("sparsity.rule_exact") : t("sparsity.rule_threshold", { threshold: s.threshold }));
  setText($("sparsity-summary"), t("sparsity.summary", {
    overall: percent(s.overall),
    dead: count(s.dead_neurons.length),
    d_ff: count(data.config.d_ff),
    tokens: count(data.config.num_tokens),
  }));
  const positions = yLabels ?? s.per_token.map((_, i) => String(i));
  // both plots' sizes in one layout, after the texts above changed the page (a plot out of
  // sight is sized when it scrolls into view: read now, the flow just drawn would be laid
  // out again for nothing)
  for (const id of ["plot-sparsity", "plot-histogram"]) if (inSight($(id))) sizeOf($(id));
  return Promise.all([
    bars($("plot-sparsity"), positions, s.per_token, {
      title: t("sparsity.per_token"),
      xTitle: t("axis.position"),
      yTitle: t("axis.inactive_fraction"),
      text: s.per_token.map(percent),
      yRange: [0, 1.1],
      filename: "ffn-sparsity",
    }),
    preActivationHistogram(data),
  ]);
}

/** Histogram of every pre-activation: binned by the server over the full tensor when it can. */
function preActivationHistogram(data) {
  const opts = {
    title: t("sparsity.histogram"),
    xTitle: t("axis.value"),
    yTitle: t("axis.count"),
    filename: "ffn-pre-activation-histogram",
  };
  const binned = data.pre_activation_histogram;
  if (binned) return binnedHistogram($("plot-histogram"), binned.edges, binned.counts, opts);
  return histogram($("plot-histogram"), data.pre_activation.flat(), opts);
}

/** The perturbation panel: ‖Δ output‖ per position, the difference heatmap, the exact zeros. */
export function renderPerturb(data, { yLabels, rowsUpTo } = /** @type {{ yLabels?: string[], rowsUpTo?: number }} */ ({})) {
  const norms = data.delta_norm_per_position;
  const positions = yLabels ?? norms.map((_, i) => String(i));
  $("perturb-max-other").textContent = t("perturb.max_other", {
    value: magnitude(data.max_abs_change_other_positions),
  });
  $("perturb-max-other").dataset.value = String(data.max_abs_change_other_positions);
  $("perturb-changed").textContent = sentences(
    t("perturb.changed", { positions: data.changed_positions.join(", ") || "—" }),
    data.max_abs_change_other_positions === 0 ? t("perturb.exact") : "");
  const list = $("delta-norms");
  list.replaceChildren(
    ...norms.map((value, position) => {
      const li = document.createElement("li");
      li.dataset.position = String(position);
      li.dataset.value = String(value);
      li.textContent = t("perturb.item", { position: positions[position], value: magnitude(value) });
      return li;
    }),
  );
  const colors = norms.map((_, i) => (i === data.position ? "#b2182b" : "#2166ac"));
  return Promise.all([
    bars($("plot-delta-norms"), positions, norms, {
      title: t("perturb.bars"),
      xTitle: t("axis.position"),
      yTitle: t("axis.delta_norm"),
      text: norms.map(magnitude),
      colors,
      filename: "ffn-perturbation-norms",
    }),
    ...beforeAfter(data, yLabels, rowsUpTo),
    heatmap($("plot-delta"), data.output_delta, {
      title: t("perturb.diff"),
      xTitle: t("axis.feature"),
      yTitle: t("axis.position"),
      yLabels,
      rowsUpTo,
      columns: columnsFor("features", data, "output_delta"),
      zmax: maxAbs(data.output_delta),
      filename: "ffn-perturbation-difference",
    }),
  ]);
}

/**
 * The output before and after the nudge, on one colour scale fixed by the larger of the two.
 * A pretrained layer (outlier features): the scale is the 99th percentile of |value| over
 * both, as in the flow, and the cells beyond it are marked ×.
 */
function beforeAfter(data, yLabels, rowsUpTo) {
  const robust = Boolean(data.config?.model);
  let zmax = Math.max(maxAbs(data.output), maxAbs(data.output_perturbed));
  let clips = [undefined, undefined];
  if (robust) {
    zmax = robustRange([...data.output, ...data.output_perturbed]).zmax;
    clips = [data.output, data.output_perturbed].map((m) => clipOf(beyond(m, zmax)));
  }
  const common = { xTitle: t("axis.feature"), yTitle: t("axis.position"), yLabels, rowsUpTo, zmax,
    columns: columnsFor("features", data, "output") };
  const before = $("plot-output-before");
  const after = $("plot-output-after");
  before.dataset.zmax = after.dataset.zmax = String(zmax);
  const note = $("perturb-scale-note");
  note.dataset.i18n = robust ? "perturb.same_scale_robust" : "perturb.same_scale";
  note.textContent = t(note.dataset.i18n);
  return [
    heatmap(before, data.output, { ...common, title: t("perturb.before"), filename: "ffn-output-before", clip: clips[0] }),
    heatmap(after, data.output_perturbed, { ...common, title: t("perturb.after"), filename: "ffn-output-after", clip: clips[1] }),
  ];
}

/** The cells of `matrix` beyond ±zmax, as robustRange returns them. */
function beyond(matrix, zmax) {
  const cells = [];
  matrix.forEach((row, r) => row.forEach((v, c) => { if (Math.abs(v) > zmax) cells.push([r, c]); }));
  return { zmax, cells };
}
