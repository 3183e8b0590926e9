// Page glue: controls <-> state <-> URL, requests, rendering. Math lives on the server.
import { getJson, LatestOnly } from "./api.js";
import { emit } from "./bus.js";
import "./panels/index.js";
import { loadLanguage, pickLanguage, t, applyTranslations } from "./i18n.js";
import { D_FF_STEPS, D_MODEL_STEPS, ladder } from "./ladders.js";
import { makeSchema, parseState, writeState } from "./state.js";
import { renderFlow, renderPerturb, renderReadout, renderSparsity } from "./views.js";

const boot = JSON.parse(document.getElementById("boot").textContent);
const schema = makeSchema(boot);
const $ = (id) => document.getElementById(id);
const forwardRequester = new LatestOnly({ reuse: true });
const perturbRequester = new LatestOnly({ reuse: true });

let { state } = parseState(schema, window.location.search);
let torchVersion = "";
let running = null; // the update in progress (a promise), or null
let pending = false; // controls changed while an update was in progress
let lastForward = null;
let lastPerturb = null;

function presetById(id) {
  return boot.presets.find((p) => p.id === id);
}

function fixedInputs() {
  const preset = presetById(state.preset);
  return preset && preset.weights ? preset : null;
}

/** The body shared by /api/forward and /api/perturb. */
function requestBody() {
  const body = {
    d_model: state.d_model,
    d_ff: state.d_ff,
    activation: state.activation,
    seed: state.seed,
    bias: state.bias,
  };
  const fixed = fixedInputs();
  if (fixed) {
    body.tokens = fixed.tokens;
    body.weights = fixed.weights;
  } else {
    body.num_tokens = state.tokens;
    body.input_seed = state.input_seed;
  }
  return body;
}

function tokenCount() {
  const fixed = fixedInputs();
  return fixed ? fixed.tokens.length : state.tokens;
}

// ---- controls ----

function setupSelects() {
  const preset = $("preset");
  preset.replaceChildren(new Option(t("controls.preset.custom"), "custom"),
    ...boot.presets.map((p) => new Option(p.name, p.id)));
  const activation = $("activation");
  activation.replaceChildren(...boot.activations.map((a) => new Option(a.label, a.name)));
}

function syncControls() {
  const dModels = ladder(D_MODEL_STEPS, boot.limits.max_d_model, state.d_model);
  const dFfs = ladder(D_FF_STEPS, boot.limits.max_d_ff, state.d_ff);
  const dm = $("d_model");
  dm.max = String(dModels.length - 1);
  dm.value = String(dModels.indexOf(state.d_model));
  dm.dataset.values = JSON.stringify(dModels);
  dm.setAttribute("aria-valuetext", String(state.d_model));
  $("d_model-value").textContent = String(state.d_model);
  const dff = $("d_ff");
  dff.max = String(dFfs.length - 1);
  dff.value = String(dFfs.indexOf(state.d_ff));
  dff.dataset.values = JSON.stringify(dFfs);
  dff.setAttribute("aria-valuetext", String(state.d_ff));
  $("d_ff-value").textContent = String(state.d_ff);
  $("ratio").textContent = t("controls.ratio", { ratio: (state.d_ff / state.d_model).toFixed(2).replace(/\.?0+$/, "") });
  const tokens = $("tokens");
  tokens.max = String(boot.limits.max_tokens);
  tokens.value = String(tokenCount());
  tokens.disabled = Boolean(fixedInputs());
  $("tokens-value").textContent = String(tokenCount());
  $("activation").value = state.activation;
  $("gated-note").hidden = !boot.activations.find((a) => a.name === state.activation)?.gated;
  $("bias").checked = state.bias;
  $("seed").value = String(state.seed);
  $("input_seed").value = String(state.input_seed);
  $("preset").value = state.preset;
  const position = $("position");
  position.max = String(tokenCount() - 1);
  state.position = Math.min(state.position, tokenCount() - 1);
  position.value = String(state.position);
  $("position-value").textContent = String(state.position);
  $("scale").value = String(state.scale);
  $("scale-value").textContent = String(state.scale);
  $("lang").value = state.lang || document.documentElement.lang;
}

function applyPreset(id) {
  const preset = presetById(id);
  state.preset = id;
  if (!preset) return;
  state.d_model = preset.d_model;
  state.d_ff = preset.d_ff;
  state.activation = preset.activation;
  state.bias = preset.bias;
  state.tokens = preset.tokens ? preset.tokens.length : preset.num_tokens;
}

/** A control changed: a preset with fixed numbers no longer applies to other shapes. */
function change(updates) {
  Object.assign(state, updates);
  const fixed = presetById(state.preset);
  if (fixed && (state.d_model !== fixed.d_model || state.d_ff !== fixed.d_ff || state.bias !== fixed.bias
      || boot.activations.find((a) => a.name === state.activation)?.gated
      || state.tokens !== (fixed.tokens ? fixed.tokens.length : fixed.num_tokens))) {
    state.preset = "custom";
  }
  syncControls();
  writeState(schema, state);
  emit("state", { state });
  schedule();
}

function ladderValue(el) {
  return JSON.parse(el.dataset.values)[Number(el.value)];
}

function bindControls() {
  $("preset").addEventListener("change", (e) => {
    applyPreset(e.target.value);
    syncControls();
    writeState(schema, state);
    schedule();
  });
  $("d_model").addEventListener("input", (e) => change({ d_model: ladderValue(e.target) }));
  $("d_ff").addEventListener("input", (e) => change({ d_ff: ladderValue(e.target) }));
  $("tokens").addEventListener("input", (e) => change({ tokens: Number(e.target.value) }));
  $("activation").addEventListener("change", (e) => change({ activation: e.target.value }));
  $("bias").addEventListener("change", (e) => change({ bias: e.target.checked }));
  for (const id of ["seed", "input_seed"]) {
    $(id).addEventListener("change", (e) => {
      const n = Number(e.target.value);
      if (Number.isInteger(n) && n >= 0 && n <= schema[id].max) change({ [id]: n });
      else syncControls();
    });
  }
  $("position").addEventListener("input", (e) => change({ position: Number(e.target.value) }));
  $("scale").addEventListener("input", (e) => change({ scale: Number(e.target.value) }));
  $("lang").addEventListener("change", async (e) => {
    state.lang = e.target.value;
    writeState(schema, state);
    await loadLanguage(state.lang, boot.i18n);
    setupSelects();
    syncControls();
    rerender();
    await emit("language", { lang: state.lang });
  });
}

// ---- requests and rendering ----

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.dataset.kind = kind;
}

/**
 * Start an update now, or, while one is in progress, once it is done: one request pair in
 * flight at a time, and the last state is always the one drawn. No debounce: a debounce
 * delays every answer by its length, even a single click.
 */
function schedule() {
  if (running) {
    pending = true;
    return;
  }
  running = run().finally(() => {
    running = null;
    if (pending) {
      pending = false;
      schedule();
    }
  });
}

function showError(err) {
  if (err.status) setStatus(t("status.error", { message: err.message }), "error");
  else setStatus(t("status.network"), "error");
}

async function run() {
  setStatus(t("status.loading"), "loading");
  const body = requestBody();
  const forward = forwardRequester.post("/api/forward", body).then(async (answer) => {
    if (answer.stale) return;
    lastForward = answer.data;
    await Promise.all([renderFlow(answer.data), renderSparsity(answer.data)]);
    renderReadout(answer.data);
    await emit("forward", { data: answer.data, body, state });
    setStatus(t("status.ready", { torch: torchVersion, ms: Math.round(answer.ms) }), "ready");
    document.body.dataset.forwardSeq = String(forwardRequester.seq);
  });
  const perturbBody = { ...body, position: state.position, scale: state.scale };
  const perturb = perturbRequester.post("/api/perturb", perturbBody).then(async (answer) => {
    if (answer.stale) return;
    lastPerturb = answer.data;
    await renderPerturb(answer.data);
    await emit("perturb", { data: answer.data, body: perturbBody, state });
    document.body.dataset.perturbSeq = String(perturbRequester.seq);
  });
  await Promise.all([forward, perturb]).catch(showError);
}

function rerender() {
  if (lastForward) {
    renderFlow(lastForward);
    renderSparsity(lastForward);
    renderReadout(lastForward);
  }
  if (lastPerturb) renderPerturb(lastPerturb);
}

async function start() {
  await loadLanguage(pickLanguage(state.lang), boot.i18n);
  setupSelects();
  if (state.preset !== "custom" && !new URLSearchParams(window.location.search).has("d_model")) {
    applyPreset(state.preset);
  }
  syncControls();
  bindControls();
  applyTranslations();
  getJson("/api/health").then((h) => { torchVersion = h.torch; }).catch(() => {});
  await run();
}

start();
