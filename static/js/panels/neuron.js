// The neuron view: click a column (hidden unit) of the hidden heatmap. Shows the unit's
// activation on every token; for the pretrained model also its top tokens over the bundled
// corpus and the vocabulary tokens nearest its value vector (Geva et al. 2021, approximate).
import { LatestOnly } from "../api.js";
import { emit, on } from "../bus.js";
import { bars } from "../charts.js";
import { signed } from "../format.js";
import { t } from "../i18n.js";
import { tokenLabels } from "../inputs.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const requester = new LatestOnly();
let forward = null;
let state = null;
let unit = null;
let details = null;

function item(parts) {
  const li = document.createElement("li");
  for (const [cls, text] of parts) {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    li.append(span, " ");
  }
  return li;
}

function renderDetails() {
  const pretrained = Boolean(forward?.tokens);
  $("neuron-corpus").textContent = pretrained
    ? details ? t("neuron.corpus", { sentences: details.corpus_sentences, tokens: details.corpus_tokens }) : t("neuron.loading")
    : t("neuron.needs_model");
  $("neuron-top").replaceChildren(...(pretrained && details ? details.top_tokens.map((x) =>
    item([["tok", x.token], ["val", signed(x.activation)], ["ctx", `“${x.sentence}”`]])) : []));
  $("neuron-near").replaceChildren(...(pretrained && details ? details.nearest_tokens.map((x) =>
    item([["tok", x.token], ["val", t("neuron.cosine", { value: x.cosine.toFixed(3) })]])) : []));
}

function render() {
  if (unit === null || !forward || unit >= forward.config.d_ff) {
    $("neuron-body").hidden = true;
    return undefined;
  }
  $("neuron-body").hidden = false;
  const column = forward.hidden.map((row) => row[unit]);
  const title = $("neuron-title");
  title.textContent = forward.config.model
    ? t("neuron.title_layer", { unit, layer: forward.config.layer })
    : t("neuron.title", { unit });
  title.dataset.unit = String(unit);
  const labels = tokenLabels(forward.tokens) ?? column.map((_, i) => String(i));
  renderDetails();
  return bars($("plot-neuron"), labels, column, {
    title: t("neuron.activation"), xTitle: t("axis.position"), yTitle: t("neuron.axis"),
    text: column.map(signed), colors: column.map((v) => (v > 0 ? "#b2182b" : "#2166ac")), filename: `neuron-${unit}`,
  });
}

async function select(next) {
  unit = next;
  details = null;
  render();
  if (unit === null || !forward?.tokens) return;
  try {
    const answer = await requester.post("/api/neuron", { model: "minilm-l6", layer: forward.config.layer, unit, top_k: 10 });
    if (answer.stale) return;
    details = answer.data;
    $("neuron-body").dataset.topCount = String(details.top_tokens.length);
    renderDetails();
  } catch (err) {
    $("neuron-corpus").textContent = t("neuron.error", { message: err.message });
  }
}

on("forward", ({ data, state: st }) => {
  const layerChanged = forward?.config.layer !== data.config.layer || forward?.config.model !== data.config.model;
  forward = data;
  state = st;
  const plot = $("plot-hidden");
  if (!plot.dataset.neuronBound && plot.on) {
    plot.on("plotly_click", (event) => {
      const point = event.points?.[0];
      // Binned or summarised heatmaps carry the real unit index in customdata or a label.
      const unit = Number.isInteger(point?.customdata) ? point.customdata : Number(point?.x);
      if (Number.isInteger(unit)) emit("set", { unit }); // in the state, so in the link
    });
    plot.dataset.neuronBound = "1";
  }
  if (unit !== null && unit < data.config.d_ff && layerChanged) return select(unit);
  return render();
});
on("language", () => render());
on("state", ({ state: st }) => {
  const wanted = st.unit >= 0 ? st.unit : null;
  if (wanted !== unit) select(wanted);
});
