// The word-swap contrast (pretrained text only): replace one word, and compare how much the
// FFN's output moves at each position (only the swapped one) with the full layer's
// (attention + FFN: every position). Two bar charts side by side.
import { LatestOnly } from "../api.js";
import { on } from "../bus.js";
import { bars } from "../charts.js";
import { magnitude } from "../format.js";
import { t } from "../i18n.js";
import { tokenLabels } from "../inputs.js";
import { setHidden } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const requester = new LatestOnly();
let state = null;
let tokens = null;
let special = null;
let last = null;

function fillPositions() {
  const select = $("swap-position");
  const keep = select.value;
  select.replaceChildren(...tokens.map((tok, i) => {
    const option = new Option(`${i} ${tok}`, String(i));
    option.disabled = Boolean(special?.[i]);
    return option;
  }));
  const first = tokens.length > 2 ? "2" : "1";
  select.value = keep && Number(keep) < tokens.length - 1 && Number(keep) > 0 ? keep : first;
}

async function run() {
  if (!state || state.source !== "text" || !tokens) return;
  const body = { model: "minilm-l6", layer: state.layer, text: state.text, position: Number($("swap-position").value), replace_word: $("swap-word").value };
  try {
    const answer = await requester.post("/api/perturb", body);
    if (answer.stale) return;
    $("contrast-error").textContent = "";
    last = answer.data;
    await render(last);
  } catch (err) {
    $("contrast-error").textContent = t("contrast.error", { message: err.message }); // old charts stay
  }
}

function render(data) {
  const labels = tokenLabels(data.tokens_perturbed.map((tok, i) => (tok === data.tokens[i] ? tok : `${data.tokens[i]}→${tok}`)));
  const colors = (norms) => norms.map((_, i) => (i === data.position ? "#b2182b" : "#2166ac"));
  const summary = $("contrast-summary");
  summary.textContent = t("contrast.summary", {
    ffn: data.changed_positions.length,
    layer: data.layer_changed_positions.length,
    total: data.tokens.length,
  });
  summary.dataset.ffnChanged = String(data.changed_positions.length);
  summary.dataset.layerChanged = String(data.layer_changed_positions.length);
  const ffn = data.delta_norm_per_position;
  const layer = data.layer_delta_norm_per_position;
  return Promise.all([
    bars($("plot-contrast-ffn"), labels, ffn, {
      title: t("contrast.ffn"), xTitle: t("axis.position"), yTitle: t("axis.delta_norm"),
      text: ffn.map(magnitude), colors: colors(ffn), filename: "ffn-word-swap",
    }),
    bars($("plot-contrast-layer"), labels, layer, {
      title: t("contrast.layer"), xTitle: t("axis.position"), yTitle: t("contrast.layer_axis"),
      text: layer.map(magnitude), colors: colors(layer), filename: "layer-word-swap",
    }),
  ]);
}

on("forward", ({ data, state: st }) => {
  state = st;
  const section = $("contrast");
  const absent = st.source !== "text" || !data.tokens;
  section.toggleAttribute("data-absent", absent);
  // shown unless absent, or an embed of another panel (static/js/classroom/layout.js)
  setHidden(section, absent || (document.body.classList.contains("embed") && !section.classList.contains("open")));
  if (!data.tokens) return undefined;
  const changed = JSON.stringify(data.tokens) !== JSON.stringify(tokens) || st.layer !== last?.config.layer;
  tokens = data.tokens;
  special = data.special;
  if (!changed) return undefined;
  fillPositions();
  return run();
});
on("language", () => { if (last) render(last); });

$("swap-run").addEventListener("click", run);
$("swap-position").addEventListener("change", run);
$("swap-word").addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
