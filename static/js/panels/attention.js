// Attention vs FFN under the same nudge of token i: attention moves every row, the FFN one.
import { bars, clearChart, heatmap, SEQUENTIAL } from "../charts.js";
import { compact, count, magnitude } from "../format.js";
import { emit } from "../bus.js";
import { separator, t } from "../i18n.js";
import { panel, positions, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const heads = $("attention-heads");

/** The head counts that divide d_model; the state's `heads` when it is one of them, else 1. */
function headsFor(state) {
  const options = [1, 2, 4, 8].filter((h) => state.d_model % h === 0);
  return { options, heads: options.includes(state.heads) ? state.heads : 1 };
}

function headOptions(state) {
  const { options, heads: numHeads } = headsFor(state);
  const current = [...heads.options].map((o) => Number(o.value)).join(",");
  if (current !== options.join(",")) {
    heads.replaceChildren(...options.map((h) => new Option(String(h), String(h))));
  }
  heads.value = String(numHeads);
}

function normBars(el, norms, position, title) {
  const labels = positions(norms.length);
  return bars(el, labels, norms, {
    title,
    xTitle: t("axis.position"),
    yTitle: t("axis.delta_norm"),
    text: norms.map(magnitude),
    colors: norms.map((_, i) => (i === position ? "#b2182b" : "#2166ac")),
    filename: el.id,
  });
}

async function render(data) {
  const T = data.config.num_tokens;
  const a = data.attention;
  const f = data.ffn;
  const moved = t("attention.moved", { n: count(a.moved_count), T: count(T) });
  readout($("attention-moved"), moved, a.moved_count);
  $("attention-moved-sep").textContent = separator(moved); // none after "；"
  readout($("ffn-moved"), t("attention.ffn_moved", { n: count(f.moved_count), T: count(T) }), f.moved_count);
  $("attention-weights-note").textContent = t("attention.weights_note", {
    heads: count(data.num_heads),
    error: magnitude(a.row_sums_max_error),
  });
  const influenceNote = $("ffn-influence-note");
  const labels = positions(T);
  const plots = [
    normBars($("plot-attention-norms"), a.delta_norm_per_position, data.position, t("attention.bars_attention")),
    normBars($("plot-ffn-norms"), f.delta_norm_per_position, data.position, t("attention.bars_ffn")),
    heatmap($("plot-attention-weights"), a.weights[0], {
      title: t("attention.weights_title"),
      xTitle: t("attention.key"),
      yTitle: t("attention.query"),
      yLabels: labels,
      zmin: 0,
      zmax: 1,
      colorscale: SEQUENTIAL, // weights in [0, 1]: a sequential scale, 0 = white
      sequential: true,
      filename: "attention-weights",
    }),
  ];
  if (f.influence) {
    const offDiagonal = f.influence.flat().filter((v, k) => v !== 0 && Math.floor(k / T) !== k % T).length;
    readout(influenceNote, t("attention.influence_note", { off: count(offDiagonal), T: count(T) }), offDiagonal);
    plots.push(heatmap($("plot-ffn-influence"), f.influence, {
      title: t("attention.influence_title"),
      xTitle: t("attention.output_row"),
      yTitle: t("attention.nudged_token"),
      yLabels: labels,
      // a norm ‖Δ output row‖ >= 0: a sequential scale from 0 (white), like the weights
      zmin: 0,
      colorscale: SEQUENTIAL,
      sequential: true,
      filename: "ffn-influence",
    }));
  } else {
    clearChart($("plot-ffn-influence")); // never the previous configuration's map
    const over = data.influence_flops != null && data.influence_flops > data.influence_max_flops;
    const reason = over
      ? t("attention.influence_over", { flops: compact(data.influence_flops), limit: compact(data.influence_max_flops) })
      : t("attention.influence_not_requested");
    readout(influenceNote, t("attention.influence_skipped", { reason }));
  }
  await Promise.all(plots);
}

panel({
  id: "attention-vs-ffn",
  url: "/api/attention-vs-ffn",
  event: "perturb",
  keys: ["heads"],
  body: (base, state) => ({ ...base, num_heads: headsFor(state).heads }),
  render,
  sync: headOptions,
});

heads.addEventListener("change", () => emit("set", { heads: Number(heads.value) }));
