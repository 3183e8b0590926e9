// Dropout: train mode drops hidden units and scales by 1/(1-p); eval mode is the identity.
import { heatmap } from "../charts.js";
import { magnitude, percent } from "../format.js";
import { emit } from "../bus.js";
import { t } from "../i18n.js";
import { typedWhole } from "../typed.js";
import { columnsFor } from "../windows.js";
import { panel, positions, readout } from "./teaching-common.js";
import { setDisabled, setText } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const TRAIN_ONLY = ["dropout-fraction", "dropout-scaling", "dropout-seed-diff"];

// The panel's mode and p are the sidebar's Mode and dropout (one truth, in the page state);
// in eval mode it lists only what eval mode has (the identity), no training figures.
async function render(data, state) {
  const section = $("dropout");
  const train = state.mode === "train"; // the answer holds both; the sidebar picks
  section.dataset.mode = train ? "train" : "eval";
  const T = data.config.num_tokens;
  for (const id of TRAIN_ONLY) $(id).hidden = !train;
  if (train) {
    readout($("dropout-main"), t("dropout.main_train", {
      p: data.p, scale: magnitude(data.scale), diff: magnitude(data.train_vs_eval_max_abs_diff),
    }), data.train_vs_eval_max_abs_diff);
    readout($("dropout-fraction"), t("dropout.fraction", { value: percent(data.dropped_fraction), p: data.p }),
      data.dropped_fraction);
    readout($("dropout-scaling"), t("dropout.scaling", {
      scale: magnitude(data.scale), error: magnitude(data.scaling_max_abs_error),
    }), data.scaling_max_abs_error);
    readout($("dropout-seed-diff"), t("dropout.seed_diff", {
      seed: state.dropout_seed, other: state.dropout_seed + 1, value: magnitude(data.other_seed_max_abs_diff),
    }), data.other_seed_max_abs_diff);
  } else {
    readout($("dropout-main"), t("dropout.main_eval", { value: magnitude(data.eval_identity_max_abs_diff) }),
      data.eval_identity_max_abs_diff);
  }
  readout($("dropout-eval"), t("dropout.eval_identity", { value: magnitude(data.eval_identity_max_abs_diff) }),
    data.eval_identity_max_abs_diff);
  const labels = positions(T);
  $("plot-dropout-mask").hidden = !train;
  await Promise.all([
    heatmap($("plot-dropout-kept"), train ? data.kept : data.hidden, {
      title: t(train ? "dropout.kept_title" : "dropout.hidden_title"),
      xTitle: t("axis.unit"), yTitle: t("axis.position"), yLabels: labels, filename: "dropout-w2-input",
      columns: columnsFor("units", data, train ? "kept" : "hidden"),
    }),
    train ? heatmap($("plot-dropout-mask"), data.dropped.map((row) => row.map((d) => (d ? 1 : 0))), {
      title: t("dropout.mask_title"), xTitle: t("axis.unit"), yTitle: t("axis.position"),
      yLabels: labels, zmax: 1, showScale: false, filename: "dropout-mask",
      columns: columnsFor("units", data, "dropped"),
    }) : null,
  ]);
}

let keptSeed = 0; // the dropout seed in use (put back when a typed one is refused)

panel({
  id: "dropout",
  url: "/api/dropout",
  event: "forward",
  body: (base, state) => ({ ...base, mode: state.mode, dropout: state.dropout, dropout_seed: state.dropout_seed }),
  render,
  sync(state) {
    document.querySelector(`input[name="dropout-mode"][value="${state.mode}"]`).checked = true;
    $("dropout-p").value = String(state.dropout);
    setText($("dropout-p-value"), String(state.dropout));
    setDisabled($("dropout-p"), state.mode !== "train");
    keptSeed = state.dropout_seed;
    if (document.activeElement !== $("dropout-seed")) $("dropout-seed").value = String(state.dropout_seed);
  },
});

for (const input of document.querySelectorAll('input[name="dropout-mode"]')) {
  input.addEventListener("change", (e) => emit("set", { mode: /** @type {HTMLInputElement} */ (e.target).value }));
}
$("dropout-p").addEventListener("input", (e) => emit("set", { dropout: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
$("dropout-seed").addEventListener("change", (e) => {
  const n = typedWhole(e.target, 2 ** 31 - 2, keptSeed);
  if (n !== null) emit("set", { dropout_seed: n });
});
