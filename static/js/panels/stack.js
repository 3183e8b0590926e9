// A stack of layers, each with its own FFN (or one shared, ALBERT-style): the nudge of one
// token traced layer by layer, the FFN's update ratio ‖FFN(x)‖/‖x‖ and sparsity per layer.
// With the typed-text source the layers are MiniLM's six real ones.
import { LatestOnly } from "../api.js";
import { emit, on } from "../bus.js";
import { bars, heatmap, SEQUENTIAL } from "../charts.js";
import { count, magnitude, percent } from "../format.js";
import { t } from "../i18n.js";
import { tokenLabels } from "../inputs.js";
import { describeError } from "../errors.js";
import { liveView, showRefused } from "../live.js";
import { showOver, stackNotice, stackNoticeFrom, stackParams } from "../overlimit.js";
import { positions, readout } from "./teaching-common.js";
import { setAttr, setText } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const section = $("stack");
const error = section.querySelector(".panel-error");
const requester = new LatestOnly();
const MODEL_LAYERS = 6;
let base = null;
let state = null;
let last = null;
let rendered = 0;
let boot = null;

function settings() {
  return {
    n_layers: state?.layers ?? 4,
    attention: state?.stack_attention ?? false,
    share_weights: state?.stack_share ?? false,
    norm: state?.stack_norm ?? "post",
  };
}

function body() {
  // The stack runs every layer (`layer` is not used) in eval mode (no dropout).
  const { layer, mode, dropout, dropout_seed, ...rest } = base;
  const s = settings();
  if (rest.model) {
    s.n_layers = Math.min(s.n_layers, MODEL_LAYERS);
    s.share_weights = false;
    s.norm = "post";
  }
  if (rest.weights) s.share_weights = true; // fixed or typed weights are one FFN: every layer's
  return { ...rest, ...s };
}

function syncControls() {
  const s = settings();
  const model = Boolean(base?.model);
  const slider = $("stack-layers");
  setAttr(slider, "max", String(model ? MODEL_LAYERS : 12));
  slider.value = String(model ? Math.min(s.n_layers, MODEL_LAYERS) : s.n_layers);
  setText($("stack-layers-value"), slider.value);
  $("stack-attention").checked = s.attention;
  const fixed = Boolean(base?.weights);
  $("stack-share").checked = (s.share_weights && !model) || fixed;
  $("stack-share").disabled = model || fixed;
  for (const input of document.querySelectorAll('input[name="stack-norm"]')) {
    input.checked = input.value === s.norm;
    input.disabled = model;
  }
}

async function render(data) {
  const n = data.n_layers;
  const T = data.config.num_tokens;
  const cols = data.tokens ? tokenLabels(data.tokens) : positions(T);
  const rows = data.layers.map((l) => t("stack.layer", { i: l.index + 1 }));
  const numbers = data.layers.map((l) => String(l.index + 1)); // heatmap rows: layer 1 at the top
  const shared = data.share_weights ? t("stack.params_shared") : t("stack.params_own", { n });
  readout($("stack-params"), t("stack.params", {
    total: count(data.params_total), per: count(data.layers[0].params.total), how: shared,
  }), data.params_total);
  $("stack-eval").hidden = base?.mode !== "train";
  const plots = [];
  if (data.changed_positions) {
    const moved = data.layers.map((l) => l.changed_positions.length);
    readout($("stack-changed"), t(data.attention ? "stack.changed_attention" : "stack.changed_ffn", {
      position: data.position, n, moved: moved[moved.length - 1], T,
      other: magnitude(data.max_abs_change_other_positions),
    }), data.changed_positions.join(","));
    $("stack-changed").dataset.perLayer = JSON.stringify(data.layers.map((l) => l.changed_positions));
    const z = data.layers.map((l) => l.delta_norm_per_position);
    plots.push(heatmap($("plot-stack-delta"), z, {
      title: t("stack.delta_title"), xTitle: t("axis.position"), yTitle: t("stack.layer_axis"),
      xLabels: cols, yLabels: numbers, zmax: Math.max(...z.flat()) || 1, filename: "stack-delta",
      // norms are >= 0: a sequential scale from 0 (white), not the diverging one
      zmin: 0, colorscale: SEQUENTIAL, sequential: true,
    }));
  } else {
    readout($("stack-changed"), t("stack.no_nudge"), "");
  }
  const ratios = data.layers.map((l) => l.update_ratio.map((v) => v ?? 0));
  plots.push(heatmap($("plot-stack-ratio"), ratios, {
    title: t("stack.ratio_title"), xTitle: t("axis.position"), yTitle: t("stack.layer_axis"),
    xLabels: cols, yLabels: numbers, zmax: Math.max(...ratios.flat()) || 1, filename: "stack-update-ratio",
    zmin: 0, colorscale: SEQUENTIAL, sequential: true,
  }));
  const sparsity = data.layers.map((l) => l.sparsity.overall);
  plots.push(bars($("plot-stack-sparsity"), rows, sparsity, {
    title: t("stack.sparsity_title"), xTitle: t("stack.layer_axis"), yTitle: t("axis.inactive_fraction"),
    text: sparsity.map(percent), yRange: [0, 1.1], filename: "stack-sparsity",
  }));
  await Promise.all(plots);
}

/** The notice when this stack is over the server's parameter limit (boot limits), else null. */
function overNotice(b) {
  boot ??= JSON.parse(document.getElementById("boot").textContent);
  if (b.model || b.weights) return null; // the real encoder's / one fixed FFN's size is known to fit
  const gated = Boolean(boot.activations.find((a) => a.name === b.activation)?.gated);
  return stackNotice(b.n_layers, stackParams(b, gated), boot.limits.max_params ?? Infinity);
}

async function refresh() {
  if (!base) return;
  const b = body();
  error.textContent = "";
  const notice = overNotice(b);
  showOver(section, notice);
  if (notice) {
    // Known to be refused: no request; the last answer is not this configuration's.
    requester.abort();
    last = null;
    showRefused(section, null);
    delete section.dataset.error;
    return;
  }
  try {
    const answer = await requester.post("/api/stack", b);
    if (answer.stale) return;
    last = answer.data;
    showRefused(section, null);
    delete section.dataset.error;
    await render(last);
    rendered += 1;
    section.dataset.rendered = String(rendered);
  } catch (err) {
    section.dataset.error = err.message;
    const over = stackNoticeFrom(err);
    if (over) {
      last = null;
      showOver(section, over);
    } else {
      showRefused(section, describeError(err));
    }
  }
}

// Every recomputation hands the perturb body to the panels ("compute"); the stack asks for
// its own answer when it is seen (static/js/live.js), else it is marked stale until then.
const view = liveView(section, () => refresh());
on("compute", ({ pBody, state: s }) => {
  base = pBody;
  state = s;
  syncControls();
  view.invalidate();
});
on("state", ({ state: s }) => {
  state = s;
  syncControls();
});
on("language", () => {
  if (last) render(last);
  else if (section.dataset.over) refresh(); // the notice in the new language
});
on("panel-state", ({ id, values }) => {
  if (id === "stack") emit("change", values);
});

$("stack-layers").addEventListener("input", (e) => {
  $("stack-layers-value").textContent = /** @type {HTMLInputElement} */ (e.target).value;
  emit("change", { layers: Number(/** @type {HTMLInputElement} */ (e.target).value) });
});
$("stack-attention").addEventListener("change", (e) => emit("change", { stack_attention: /** @type {HTMLInputElement} */ (e.target).checked }));
$("stack-share").addEventListener("change", (e) => emit("change", { stack_share: /** @type {HTMLInputElement} */ (e.target).checked }));
for (const input of document.querySelectorAll('input[name="stack-norm"]')) {
  input.addEventListener("change", (e) => emit("change", { stack_norm: /** @type {HTMLInputElement} */ (e.target).value }));
}
