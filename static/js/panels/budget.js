// Parameter and FLOP budget of the FFN against attention, and the Conv1d check.
import { LatestOnly } from "../api.js";
import { lines, SERIES } from "../charts.js";
import { count, magnitude } from "../format.js";
import { t } from "../i18n.js";
import { panel, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const convRequester = new LatestOnly();

function sumBy(params, prefix) {
  return Object.entries(params)
    .filter(([name]) => name !== "total" && name.startsWith(prefix))
    .reduce((s, [, n]) => s + n, 0);
}

async function conv1d(base) {
  const answer = await convRequester.post("/api/conv1d-check", base);
  if (answer.stale) return;
  const d = answer.data;
  const shapes = Object.entries(d.conv_shapes).map(([k, s]) => `${k} [${s.join(" × ")}]`).join(" · ");
  const linear = Object.entries(d.linear_shapes).filter(([k]) => k.startsWith("w"))
    .map(([k, s]) => `${k} [${s.join(" × ")}]`).join(" · ");
  $("conv-shapes").textContent = t("conv.shapes", { conv: shapes, linear });
  readout($("conv-diff"), t("conv.diff", { value: magnitude(d.max_abs_diff) }), d.max_abs_diff);
}

let lastBase = null;

async function render(data) {
  const ffn = data.ffn;
  const attn = data.attention;
  const c = data.config;
  const set = (id, n) => readout($(id), count(n), n);
  set("budget-ffn-weights", sumBy(ffn.params, "w"));
  set("budget-attn-weights", sumBy(attn.params, "w"));
  set("budget-ffn-biases", sumBy(ffn.params, "b"));
  set("budget-attn-biases", sumBy(attn.params, "b"));
  set("budget-ffn-params", ffn.params.total);
  set("budget-attn-params", attn.params.total);
  set("budget-ffn-flops", ffn.flops.total);
  set("budget-attn-flops", attn.flops.total);
  $("budget-flops-label").textContent = t("budget.row.flops", { T: c.num_tokens });
  // the bias terms in parentheses only when the layer has biases (the counts above say 0)
  const nobias = c.bias ? "" : "_nobias";
  $("budget-ffn-formula").textContent = t(`budget.ffn_formula${c.gated ? "_gated" : ""}${nobias}`, {
    d_model: c.d_model, d_ff: c.d_ff,
  });
  $("budget-attn-formula").textContent = t(`budget.attn_formula${nobias}`, { d_model: c.d_model });
  readout($("budget-share"), t("budget.share", {
    share: `${(100 * data.ffn_share_of_params).toFixed(1)}%`, ratio: magnitude(data.params_ratio),
  }), data.params_ratio);
  const s = data.series;
  const first = s.tokens[0];
  const lastIndex = s.tokens.length - 1;
  readout($("budget-growth"), t("budget.growth", {
    t0: first, t1: s.tokens[lastIndex],
    p0: count(s.ffn_params[0]), p1: count(s.ffn_params[lastIndex]),
    f0: count(s.ffn_flops[0]), f1: count(s.ffn_flops[lastIndex]),
    a0: count(s.attention_flops[0]), a1: count(s.attention_flops[lastIndex]),
  }), s.ffn_params[lastIndex] - s.ffn_params[0]);
  const common = { xTitle: t("controls.tokens"), xType: "log", yType: "log" };
  await Promise.all([
    lines($("plot-budget-params"), [
      { x: s.tokens, y: s.ffn_params, name: t("budget.col.ffn"), color: SERIES[0] },
      { x: s.tokens, y: s.attention_params, name: t("budget.col.attention"), color: SERIES[1] },
    ], {
      // flat lines on a linear axis from 0: both counts inside it, the FFN's about twice
      // attention's at d_ff = 4 d_model, and no tick a fraction of a parameter
      ...common, title: t("budget.params_title"), yTitle: t("budget.row.params"), filename: "budget-params",
      yType: "linear", yRange: [0, 1.1 * Math.max(...s.ffn_params, ...s.attention_params)],
    }),
    lines($("plot-budget-flops"), [
      { x: s.tokens, y: s.ffn_flops, name: t("budget.col.ffn"), color: SERIES[0] },
      { x: s.tokens, y: s.attention_flops, name: t("budget.col.attention"), color: SERIES[1] },
    ], { ...common, title: t("budget.flops_title"), yTitle: t("budget.flops_axis"), filename: "budget-flops" }),
    lastBase ? conv1d(lastBase) : null,
  ]);
}

panel({
  id: "budget",
  url: "/api/budget",
  event: "forward",
  body(base, state) {
    lastBase = base;
    const body = { d_model: base.d_model, d_ff: base.d_ff, activation: base.activation, bias: base.bias };
    body.num_tokens = base.tokens ? base.tokens.length : state.tokens;
    return body;
  },
  render,
});
