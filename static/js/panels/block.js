// The FFN in its block: post-norm LayerNorm(x + FFN(x)) or pre-norm x + FFN(LayerNorm(x)).
import { heatmap } from "../charts.js";
import { magnitude, signed, signedDigits } from "../format.js";
import { emit } from "../bus.js";
import { t } from "../i18n.js";
import { columnsFor } from "../windows.js";
import { panel, positions, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));

const ARROWS = {
  post: ["block.arrow_ffn", "block.arrow_add", "block.arrow_ln"],
  pre: ["block.arrow_ln", "block.arrow_ffn", "block.arrow_add"],
};

function shapeText(name, shape) {
  // no-break spaces: a shape never breaks as "Residual input x [6 ×" above "16]"
  return `${t(`block.step.${name}`)} [${shape.join("\u00a0×\u00a0")}]`;
}

async function render(data) {
  const c = data.config;
  const steps = data.steps;
  $("block-formula").textContent = t(`block.formula_${data.norm}`);
  ARROWS[data.norm].forEach((key, i) => {
    $(`arrow-block-${i + 1}`).textContent = t(key);
  });
  const T = c.num_tokens;
  const small = c.d_model <= 8;
  const labels = positions(T);
  const zmax = Math.max(...steps.map((s) => Math.max(...data.tensors[s].flat().map(Math.abs)))) || 1;
  const plots = steps.map((step, i) => {
    const el = $(`plot-block-${i}`);
    el.dataset.step = step;
    $(`shape-block-${i}`).textContent = shapeText(step, data.shapes[step]);
    return heatmap(el, data.tensors[step], {
      title: t(`block.step.${step}`),
      xTitle: t("axis.feature"),
      yTitle: t("axis.position"),
      yLabels: labels,
      zmax,
      showValues: small,
      format: signed,
      shorten: signedDigits,
      showScale: i === steps.length - 1,
      showYTitle: i === 0,
      columns: columnsFor("features", { ...data.tensors, reduction: data.reduction }, step),
      filename: `block-${data.norm}-${step}`,
    });
  });
  $("block-shapes").textContent = t("block.shapes", {
    T, d_model: c.d_model, d_ff: c.d_ff,
  });
  $("block-why").textContent = t("block.why", { d_model: c.d_model, d_ff: c.d_ff });
  const last = steps[steps.length - 1];
  const means = data.row_mean[last];
  const stds = data.row_std[last];
  const maxMean = Math.max(...means.map(Math.abs));
  const stdRange = [Math.min(...stds), Math.max(...stds)];
  const grow = data.row_norm.output.reduce((s, v) => s + v, 0) / data.row_norm.input.reduce((s, v) => s + v, 0);
  readout($("block-stats"), t(`block.stats_${data.norm}`, {
    mean: magnitude(maxMean), std_lo: stdRange[0].toFixed(5), std_hi: stdRange[1].toFixed(5),
    ratio: magnitude(grow),
  }), maxMean);
  $("block-stats").dataset.stdMin = String(stdRange[0]);
  $("block-stats").dataset.stdMax = String(stdRange[1]);
  await Promise.all(plots);
}

panel({
  id: "block",
  url: "/api/block",
  event: "forward",
  keys: ["norm"],
  body: (base, state) => ({ ...base, norm: state.norm }),
  render,
  sync(state) {
    document.querySelector(`input[name="block-norm"][value="${state.norm}"]`).checked = true;
  },
});

for (const input of document.querySelectorAll('input[name="block-norm"]')) {
  input.addEventListener("change", (e) => emit("set", { norm: /** @type {HTMLInputElement} */ (e.target).value }));
}
