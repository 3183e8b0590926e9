// ReLU, GELU, SiLU, SwiGLU, GeGLU, GeGLU (tanh) side by side: same input, same W1.
import { bars, lines, SERIES } from "../charts.js";
import { count, magnitude, percent } from "../format.js";
import { emit } from "../bus.js";
import { t } from "../i18n.js";
import { cell, panel, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const match = $("variants-match");

// One curve per element-wise function; the gated variants use SiLU / GELU on the gate.
const CURVES = [["relu", "ReLU", "solid"], ["gelu", "GELU", "dash"], ["silu", "SiLU", "dot"]];
const CURVE_COLOR = "#333";

async function render(data) {
  const variants = data.variants;
  const curves = CURVES.map(([name, label, dash]) => ({
    x: data.curves.z, y: data.curves.curves[name], name: label, mode: "lines", color: CURVE_COLOR, dash,
  }));
  const clouds = variants.map((v, i) => ({
    x: v.scatter.z, y: v.scatter.y, mode: "markers", name: t("variants.points", { label: v.label }),
    color: SERIES[i], size: 5, opacity: 0.45,
  }));
  const rows = variants.map((v) => {
    const tr = document.createElement("tr");
    tr.dataset.variant = v.name;
    const matrices = v.gated ? 3 : 2;
    tr.append(
      cell(v.label), cell(count(matrices), matrices), cell(count(v.d_ff), v.d_ff),
      cell(count(v.params.total), v.params.total),
      cell(percent(v.fractions.exact_zero), v.fractions.exact_zero),
      cell(percent(v.fractions.near_zero), v.fractions.near_zero),
      cell(percent(v.fractions.negative), v.fractions.negative),
    );
    return tr;
  });
  $("variants-table").querySelector("tbody").replaceChildren(...rows);
  const shared = data.shared_w1_max_abs_diff;
  readout($("variants-shared"), shared === null ? "" : t("variants.shared", {
    value: magnitude(shared), threshold: data.variants[1].sparsity.threshold,
  }), shared ?? "");
  const l = data.llama;
  // One computation, printed once: LLaMA's own width needs no second example, and below one
  // multiple of 256 the rounding means nothing, so a tiny model reads the exact 8/3 d_model.
  let key = "variants.llama";
  if (l.d_model === 4096) key = "variants.llama_4096";
  else if (l.two_thirds < 256) key = "variants.llama_tiny";
  $("variants-llama").textContent = t(key, {
    d_model: count(l.d_model), four: count(l.four_d_model), two_thirds: magnitude(l.two_thirds),
    rule: count(l.d_ff_rule), d_4096: count(l.d_ff_4096), four_4096: count(4 * 4096),
    two_thirds_4096: magnitude(l.two_thirds_4096),
  });
  $("variants-llama").dataset.rule = key.replace("variants.", "");
  $("variants-llama").dataset.value = String(l.d_ff_4096);
  readout($("variants-match-note"), t("variants.match_note", {
    plain: count(l.plain_params), gated: count(l.gated_params_same_d_ff),
    matched: count(l.matched_d_ff), matched_params: count(l.gated_params_matched),
  }), l.matched_d_ff);
  const threshold = data.variants[1].sparsity.threshold;
  await Promise.all([
    lines($("plot-variant-curves"), [...curves, ...clouds], {
      title: t("variants.curves_title"), xTitle: t("variants.z"), yTitle: t("variants.act"),
      filename: "variant-curves",
    }),
    bars($("plot-variant-sparsity"), variants.map((v) => v.label), variants.map((v) => v.fractions.near_zero), {
      title: t("variants.sparsity_title", { threshold }),
      xTitle: t("variants.col.name"), yTitle: t("axis.inactive_fraction"),
      text: variants.map((v) => percent(v.fractions.near_zero)), yRange: [0, 1.1],
      colors: variants.map((_, i) => SERIES[i]),
      filename: "variant-sparsity",
    }),
  ]);
}

panel({
  id: "variants",
  url: "/api/variants",
  event: "forward",
  keys: ["match"],
  body(base, state) {
    const body = { ...base, match_params: state.match };
    if (body.weights && body.weights.w_gate) delete body.weights; // variants need a plain set
    return body;
  },
  render,
  sync(state) {
    match.checked = state.match;
  },
});

match.addEventListener("change", () => emit("set", { match: match.checked }));
