// Cheaper FFNs, measured: a low-rank FFN (W1 ~ U V, the rank-r SVD of the plain W1) and
// MobileBERT's stacked small FFNs beside the plain one, on the same input.
import { emit, on } from "../bus.js";
import { lines, SERIES } from "../charts.js";
import { count, magnitude, percent } from "../format.js";
import { t } from "../i18n.js";
import { svdNotice, svdNoticeFrom } from "../overlimit.js";
import { cell, panel, readout } from "./teaching-common.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
let state = null;
const boot = JSON.parse(document.getElementById("boot").textContent);

/** r: the URL's `cheap_rank` (0: d_model / 4), within [1, min(d_model, d_ff)]. */
function rankFor(base) {
  const most = Math.min(base.d_model, base.d_ff);
  const wanted = state?.cheap_rank || Math.max(1, Math.floor(base.d_model / 4));
  return Math.max(1, Math.min(wanted, most));
}

async function render(data) {
  const slider = $("cheaper-rank");
  slider.max = String(Math.min(data.config.d_model, data.config.d_ff));
  slider.value = String(data.rank);
  $("cheaper-rank-value").textContent = String(data.rank);
  $("cheaper-rows").replaceChildren(...data.variants.map((v) => {
    const tr = document.createElement("tr");
    tr.dataset.name = v.name;
    const th = document.createElement("th");
    th.textContent = t(`cheaper.row.${v.name}`, { rank: data.rank, d_inner: data.d_inner, num_ffns: data.num_ffns });
    tr.append(th, cell(count(v.params.total), v.params.total), cell(percent(v.params_ratio), v.params_ratio),
      cell(count(v.flops), v.flops), cell(percent(v.flops_ratio), v.flops_ratio),
      cell(v.approximates_plain ? magnitude(v.relative_error) : t("cheaper.other_network"), v.relative_error));
    return tr;
  }));
  readout($("cheaper-energy"), t("cheaper.energy", {
    rank: data.rank, kept: percent(data.energy_kept), n: data.singular_values.length,
  }), data.energy_kept);
  const names = data.variants.map((v) => t(`cheaper.short.${v.name}`));
  await lines($("plot-cheaper-ratios"), [
    { name: t("cheaper.col.params_ratio"), mode: "markers", size: 12, color: SERIES[0], x: names, y: data.variants.map((v) => v.params_ratio) },
    { name: t("cheaper.col.flops_ratio"), mode: "markers", size: 8, color: SERIES[1], x: names, y: data.variants.map((v) => v.flops_ratio) },
  ], {
    title: t("cheaper.plot_title"), xTitle: t("cheaper.variant"), yTitle: t("cheaper.ratio"),
    xType: "category", filename: "cheaper-ratios",
    // ratios to the plain FFN read against 0 (a bar-like reading: half the cost is half the height)
    yRange: [0, 1.1 * Math.max(1, ...data.variants.flatMap((v) => [v.params_ratio, v.flops_ratio]))],
  });
}

panel({
  id: "cheaper",
  url: "/api/cheaper",
  event: "forward",
  keys: ["cheap_rank"],
  body: (base) => ({ ...base, rank: rankFor(base) }),
  // The low-rank view factors W1 (d_model x d_ff) by SVD, up to the server's size limit.
  over: (b) => svdNotice(b.d_model * b.d_ff, boot.limits.max_svd_values ?? Infinity),
  overFrom: svdNoticeFrom,
  render,
});

on("state", ({ state: s }) => {
  state = s;
});
$("cheaper-rank").addEventListener("change", (e) => emit("change", { cheap_rank: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
