// Dropout: train mode drops hidden units and scales by 1/(1-p); eval mode is the identity.
import { heatmap } from "../charts.js";
import { magnitude, percent } from "../format.js";
import { t } from "../i18n.js";
import { columnsFor } from "../windows.js";
import { panel, positions, readout } from "./teaching-common.js";

const $ = (id) => document.getElementById(id);
const controls = { mode: "train", p: 0.1, seed: 0 }; // p as the sidebar's default

async function render(data) {
  const section = $("dropout");
  section.dataset.mode = controls.mode;
  const train = controls.mode === "train";
  const T = data.config.num_tokens;
  if (train) {
    readout($("dropout-main"), t("dropout.main_train", {
      p: data.p, scale: magnitude(data.scale), diff: magnitude(data.train_vs_eval_max_abs_diff),
    }), data.train_vs_eval_max_abs_diff);
  } else {
    readout($("dropout-main"), t("dropout.main_eval", { value: magnitude(data.eval_identity_max_abs_diff) }),
      data.eval_identity_max_abs_diff);
  }
  readout($("dropout-fraction"), t("dropout.fraction", { value: percent(data.dropped_fraction), p: data.p }),
    data.dropped_fraction);
  readout($("dropout-scaling"), t("dropout.scaling", {
    scale: magnitude(data.scale), error: magnitude(data.scaling_max_abs_error),
  }), data.scaling_max_abs_error);
  readout($("dropout-seed-diff"), t("dropout.seed_diff", {
    seed: controls.seed, other: controls.seed + 1, value: magnitude(data.other_seed_max_abs_diff),
  }), data.other_seed_max_abs_diff);
  readout($("dropout-eval"), t("dropout.eval_identity", { value: magnitude(data.eval_identity_max_abs_diff) }),
    data.eval_identity_max_abs_diff);
  const labels = positions(T);
  const mask = data.dropped.map((row) => row.map((d) => (d ? 1 : 0)));
  $("plot-dropout-mask").hidden = !train;
  await Promise.all([
    heatmap($("plot-dropout-kept"), train ? data.kept : data.hidden, {
      title: t(train ? "dropout.kept_title" : "dropout.hidden_title"),
      xTitle: t("axis.unit"), yTitle: t("axis.position"), yLabels: labels, filename: "dropout-w2-input",
      columns: columnsFor("units", data, train ? "kept" : "hidden"),
    }),
    train ? heatmap($("plot-dropout-mask"), mask, {
      title: t("dropout.mask_title"), xTitle: t("axis.unit"), yTitle: t("axis.position"),
      yLabels: labels, zmax: 1, showScale: false, filename: "dropout-mask",
      columns: columnsFor("units", data, "dropped"),
    }) : null,
  ]);
}

const runner = panel({
  id: "dropout",
  url: "/api/dropout",
  event: "forward",
  body: (base) => ({ ...base, mode: controls.mode, dropout: controls.p, dropout_seed: controls.seed }),
  render,
  setValues(values) {
    if (values.mode === "train" || values.mode === "eval") controls.mode = values.mode;
    if (values.p !== undefined) controls.p = Number(values.p);
    if (values.seed !== undefined) controls.seed = Number(values.seed);
    sync();
  },
});

function sync() {
  document.querySelector(`input[name="dropout-mode"][value="${controls.mode}"]`).checked = true;
  $("dropout-p").value = String(controls.p);
  $("dropout-p-value").textContent = String(controls.p);
  $("dropout-seed").value = String(controls.seed);
}

for (const input of document.querySelectorAll('input[name="dropout-mode"]')) {
  input.addEventListener("change", (e) => {
    controls.mode = e.target.value;
    runner.refresh();
  });
}
$("dropout-p").addEventListener("input", (e) => {
  controls.p = Number(e.target.value);
  $("dropout-p-value").textContent = String(controls.p);
  runner.refresh();
});
$("dropout-seed").addEventListener("change", (e) => {
  const n = Number(e.target.value);
  if (Number.isInteger(n) && n >= 0 && n < 2 ** 31 - 1) {
    controls.seed = n;
    runner.refresh();
  } else {
    sync();
  }
});
