// Page glue: controls <-> state <-> URL, requests, rendering. Math lives on the server.
// Classroom features (layout, lesson, share, export) get the `app` object below.
import { getJson, LatestOnly } from "./api.js";
import { emit, on } from "./bus.js";
import { applySource, tokenLabels } from "./inputs.js";
import "./panels/index.js";
import { initLayout } from "./classroom/layout.js";
import { initShare } from "./classroom/share.js";
import { describeError } from "./errors.js";
import { initExport } from "./export/index.js";
import { applyTranslations, loadLanguage, pickLanguage, t } from "./i18n.js";
import { D_FF_STEPS, D_MODEL_STEPS, ffnParams, fitLadder } from "./ladders.js";
import { liveView, setBusy, setForced, showRefused } from "./live.js";
import { initLesson } from "./lesson/engine.js";
import { STEPS } from "./lesson/steps.js";
import { HIDEABLE, makeSchema, parseState, writeState } from "./state.js";
import { renderFlow, renderPerturb, renderReadout, renderSparsity } from "./views.js";
import { windowFields } from "./windows.js";

const boot = JSON.parse(document.getElementById("boot").textContent);
const schema = makeSchema(boot, { steps: STEPS.length });
const $ = (id) => document.getElementById(id);
const forwardRequester = new LatestOnly({ reuse: true });
const perturbRequester = new LatestOnly({ reuse: true });
/** Settings that change what the server computes; the others only change the view. */
const COMPUTED = ["preset", "d_model", "d_ff", "activation", "tokens", "bias", "seed", "input_seed",
  "position", "scale", "mode", "dropout", "source", "text", "layer", "x", "w", "dropout_seed"];
/** The views drawn from /api/forward's answer (busy while it is pending). */
const FORWARD_VIEWS = ["flow", "sparsity", "readout", "neuron"];
/** Request fields (422 `loc`) -> the sidebar control that sets them. */
const FIELD_CONTROL = { num_tokens: "tokens", tokens: "tokens", dropout: "dropout", input_seed: "input_seed" };

const parsed = parseState(schema, window.location.search, window.location.hash);
let state = parsed.state;
let torchVersion = "";
let forwardSeq = 0; // the newest forward request (older answers are never drawn)
let lastChanged = null; // the control the user changed last (where a refusal is shown)
let lastForward = null;
let lastForwardBody = null;
let lastPerturbBody = null;
let forwardDone = Promise.resolve(); // the newest forward request (export waits for it)
let lastPerturb = null;
let lastError = null;
let layout = null;

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
  if (state.mode === "train") {
    body.mode = "train";
    body.dropout = state.dropout;
    if (state.dropout_seed) body.dropout_seed = state.dropout_seed;
  }
  if (state.d_model <= 8 && state.d_ff <= 8) body.include_weights = true; // drawn beside the flow
  Object.assign(body, windowFields()); // which columns of a big tensor to send (windows.js)
  return applySource(body, state); // own data or typed text (static/js/panels/source.js)
}

function perturbBody() {
  return { ...requestBody(), position: state.position, scale: state.scale };
}

function tokenCount() {
  const fixed = fixedInputs();
  return fixed ? fixed.tokens.length : state.tokens;
}

// ---- controls ----

function setupSelects() {
  const preset = $("preset");
  preset.replaceChildren(new Option(t("controls.preset.custom"), "custom"),
    ...boot.presets.map((p) => {
      // a preset's name in the page's language when the catalog has one (proper names do not)
      const key = `controls.preset.name.${p.id}`;
      const label = t(key);
      return new Option(label === key ? p.name : label, p.id);
    }));
  const activation = $("activation");
  activation.replaceChildren(...boot.activations.map((a) => new Option(a.label, a.name)));
  const panel = $("panel");
  panel.replaceChildren(new Option(t("controls.panel.all"), ""),
    ...schema.panel.values.filter(Boolean).map((id) => {
      const heading = document.querySelector(`#${id} h2`);
      return new Option(heading ? heading.textContent : id, id);
    }));
}

function syncControls() {
  // The sliders offer only the widths the server accepts for this activation (gated: 3 matrices).
  const gated = Boolean(boot.activations.find((a) => a.name === state.activation)?.gated);
  const maxParams = boot.limits.max_params ?? Infinity;
  const dModels = fitLadder(D_MODEL_STEPS, boot.limits.max_d_model, state.d_model,
    (dm) => ffnParams(dm, state.d_ff, gated, state.bias) <= maxParams);
  const dFfs = fitLadder(D_FF_STEPS, boot.limits.max_d_ff, state.d_ff,
    (dff) => ffnParams(state.d_model, dff, gated, state.bias) <= maxParams);
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
  $("mode").value = state.mode;
  $("control-dropout").value = String(state.dropout);
  $("control-dropout").disabled = state.mode !== "train";
  $("control-dropout-value").textContent = String(state.dropout);
  $("panel").value = state.panel;
  $("lang").value = state.lang || document.documentElement.lang;
  // Typed text: the (locked) controls show the pretrained layer that ran, whatever re-synced them.
  if (state.source === "text" && lastForward?.config) showActualShape(lastForward.config);
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

/** A preset with fixed numbers no longer applies once its shape is changed. */
function dropStalePreset() {
  const fixed = presetById(state.preset);
  const gated = (name) => Boolean(boot.activations.find((a) => a.name === name)?.gated);
  // a gate the preset has no weights for (or leaving a gated preset's gate) is another FFN
  if (fixed && (state.d_model !== fixed.d_model || state.d_ff !== fixed.d_ff || state.bias !== fixed.bias
      || gated(state.activation) !== gated(fixed.activation)
      || state.tokens !== (fixed.tokens ? fixed.tokens.length : fixed.num_tokens))) {
    state.preset = "custom";
  }
}

/**
 * Change settings (any names of the schema): applies a preset first, syncs the controls,
 * the URL and the layout, and recomputes when a computed setting changed.
 */
function assignState(updates) {
  const { preset, lang, ...rest } = updates;
  Object.assign(state, rest);
  if (preset !== undefined) applyPreset(preset); // a preset's shape wins over the rest
  else dropStalePreset();
}

/** Apply `updates`; recompute when a computed setting changed or `force` (new own data). */
async function change(updates, { force = false } = {}) {
  const before = COMPUTED.map((k) => state[k]);
  const { lang } = updates;
  const changedControl = Object.keys(updates).find((k) => HIDEABLE.includes(k) && updates[k] !== state[k]);
  if (changedControl) lastChanged = changedControl;
  assignState(updates);
  if (lang !== undefined && lang !== state.lang) {
    state.lang = lang;
    await switchLanguage(lang);
  }
  syncControls();
  writeState(schema, state);
  layout.apply(state);
  setForced(forcedPanel());
  const computing = force || COMPUTED.some((k, i) => state[k] !== before[i]);
  await emit("state", { state, computing });
  if (computing) run();
}

/** The panel shown whatever the scroll position: the lesson's or the embed's. */
function forcedPanel() {
  if (!state.lesson && !state.embed) return "";
  return state.panel || (state.embed ? "flow" : "");
}

async function switchLanguage(lang) {
  await loadLanguage(lang, boot.i18n);
  setupSelects();
  syncControls();
  rerender();
  await emit("language", { lang });
}

function ladderValue(el) {
  return JSON.parse(el.dataset.values)[Number(el.value)];
}

function bindControls() {
  $("preset").addEventListener("change", (e) => change({ preset: e.target.value }));
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
  $("mode").addEventListener("change", (e) => change({ mode: e.target.value }));
  $("control-dropout").addEventListener("input", (e) => change({ dropout: Number(e.target.value) }));
  $("panel").addEventListener("change", (e) => change({ panel: e.target.value }));
  $("lang").addEventListener("change", (e) => change({ lang: e.target.value }));
}

// ---- requests and rendering ----

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.dataset.kind = kind;
}

function sectionsOf(ids) {
  return ids.map($).filter(Boolean);
}

/** The sidebar control a refusal is about: the field the server names, else the last changed. */
function controlOf(err) {
  const fields = (Array.isArray(err?.detail?.detail) ? err.detail.detail : [])
    .map((e) => (e.loc || []).filter((p) => p !== "body")[0]).filter(Boolean);
  const named = fields.map((f) => FIELD_CONTROL[f] ?? f).find((f) => HIDEABLE.includes(f));
  return named ?? lastChanged;
}

function clearControlError() {
  for (const el of document.querySelectorAll(".field[data-refused]")) {
    delete el.dataset.refused;
    el.querySelector(".field-error")?.remove();
  }
}

/** A refusal: in the status line, at the views it would have replaced, at its control. */
function showError(err, sections) {
  lastError = { err, sections };
  const message = describeError(err);
  setStatus(message, "error");
  // Said once, at the first of the views it concerns; the others are dimmed.
  sections.forEach((section, i) => showRefused(section, message, { box: i === 0 }));
  clearControlError();
  const control = err?.status ? controlOf(err) : null;
  const field = control && document.querySelector(`.field[data-control="${control}"]`);
  if (field) {
    field.dataset.refused = "1";
    const p = document.createElement("p");
    p.className = "field-error";
    p.setAttribute("role", "alert");
    p.textContent = message;
    field.append(p);
  }
  document.body.dataset.refused = control ?? "whole-request";
}

function clearError(sections) {
  for (const section of sections) showRefused(section, null);
  if (lastError && lastError.sections.every((s) => sections.includes(s))) {
    lastError = null;
    clearControlError();
    delete document.body.dataset.refused;
  }
}

/** The (disabled) controls show what really ran, e.g. the pretrained layer's shape and GELU. */
function showActualShape(config) {
  $("activation").value = config.activation;
  $("gated-note").hidden = !config.gated;
  $("bias").checked = config.bias;
  $("d_model-value").textContent = String(config.d_model);
  $("d_ff-value").textContent = String(config.d_ff);
  $("tokens-value").textContent = String(config.num_tokens);
  $("ratio").textContent = t("controls.ratio", {
    ratio: (config.d_ff / config.d_model).toFixed(2).replace(/\.?0+$/, ""),
  });
}

/**
 * Recompute for the current state: /api/forward always (the flow, sparsity and readout, and
 * the base of the other views), the other views only when seen (static/js/live.js). A newer
 * call aborts the older requests (LatestOnly), so an old answer is never drawn.
 */
function run() {
  const body = requestBody();
  const pBody = perturbBody();
  emit("compute", { body, pBody, state });
  perturbView.invalidate();
  forwardDone = requestForward(body);
  return forwardDone;
}

/** Wait until the answers for the current state are in (the perturbation fetched if unseen). */
async function settle() {
  let pending;
  do {
    pending = forwardDone;
    await pending;
  } while (pending !== forwardDone);
  if (perturbView.dirty) await perturbView.refresh();
}

async function requestForward(body) {
  const mine = ++forwardSeq;
  const sections = sectionsOf(FORWARD_VIEWS);
  setStatus(t("status.loading"), "loading");
  for (const section of sections) setBusy(section, true);
  try {
    const answer = await forwardRequester.post("/api/forward", body);
    if (answer.stale || mine !== forwardSeq) return;
    clearError(sections);
    lastForward = answer.data;
    lastForwardBody = body;
    const labels = { yLabels: tokenLabels(answer.data.tokens) };
    // Plots, captions and readouts of one answer together: no mix of two configurations.
    await Promise.all([renderFlow(answer.data, labels), renderSparsity(answer.data, labels)]);
    renderReadout(answer.data);
    showActualShape(answer.data.config);
    await emit("forward", { data: answer.data, body, state });
    const ms = Math.round(answer.ms);
    setStatus(torchVersion ? t("status.ready", { torch: torchVersion, ms }) : t("status.ready_short", { ms }), "ready");
    document.body.dataset.forwardSeq = String(forwardRequester.seq);
  } catch (err) {
    if (mine === forwardSeq) showError(err, sections);
  } finally {
    if (mine === forwardSeq) for (const section of sections) setBusy(section, false);
  }
}

async function requestPerturb() {
  const pBody = perturbBody();
  const section = $("perturb");
  try {
    const answer = await perturbRequester.post("/api/perturb", pBody);
    if (answer.stale) return;
    clearError([section]);
    lastPerturb = answer.data;
    lastPerturbBody = pBody;
    await renderPerturb(answer.data, { yLabels: tokenLabels(answer.data.tokens) });
    await emit("perturb", { data: answer.data, body: pBody, state });
    document.body.dataset.perturbSeq = String(perturbRequester.seq);
  } catch (err) {
    showError(err, [section]);
  }
}

const perturbView = liveView($("perturb"), requestPerturb);

function rerender() {
  if (lastForward) {
    renderFlow(lastForward, { yLabels: tokenLabels(lastForward.tokens) });
    renderSparsity(lastForward, { yLabels: tokenLabels(lastForward.tokens) });
    renderReadout(lastForward);
  }
  if (lastPerturb) renderPerturb(lastPerturb, { yLabels: tokenLabels(lastPerturb.tokens) });
  if (lastError) showError(lastError.err, lastError.sections);
}

// Panels change settings through the same path as the controls (e.g. the input source).
// Their data (pasted vectors, typed weights) lives in the panel, so always recompute.
on("change", (updates) => change(updates, { force: true }));
// A moved column window, a new text size or window size: draw the last answers again.
on("redraw", () => rerender());
// A panel's own setting (heads, norm, ...): recomputes only what depends on it.
on("set", (updates) => change(updates));

/** What the classroom modules may use: read the state, change it, read the last answers. */
const app = {
  boot,
  schema,
  steps: STEPS,
  get state() { return state; },
  change,
  requestBody,
  perturbBody,
  last: () => ({ forward: lastForward, perturb: lastPerturb, forwardBody: lastForwardBody,
    perturbBody: lastPerturbBody }),
  settle,
  rerender,
};

async function start() {
  await loadLanguage(pickLanguage(state.lang), boot.i18n);
  setupSelects();
  const conflicts = [];
  const fixedPreset = presetById(state.preset)?.weights;
  if (state.preset !== "custom" && (fixedPreset || !parsed.present.has("d_model"))) {
    const { d_model, d_ff, activation, bias, tokens } = state;
    applyPreset(state.preset);
    // Explicit URL values win over the preset's, except where a preset with fixed numbers
    // (the tiny one) cannot run with them: those fall back, named in the notice.
    for (const [k, v] of Object.entries({ d_model, d_ff, activation, bias, tokens })) {
      if (!parsed.present.has(k)) continue;
      const gatedOn = k === "activation" && boot.activations.find((a) => a.name === v)?.gated;
      if (fixedPreset && v !== state[k] && (k !== "activation" || gatedOn)) conflicts.push({ name: k, raw: String(v) });
      else state[k] = v;
    }
  }
  layout = initLayout(app, parsed.invalid, conflicts.length ? { preset: presetById(state.preset).name, list: conflicts } : null);
  // A lesson link opens on its step's settings; values given in the URL win.
  const lessonState = initLesson(app).startState();
  if (lessonState) {
    const given = Object.fromEntries([...parsed.present].map((k) => [k, state[k]]));
    assignState(lessonState);
    Object.assign(state, given);
  }
  writeState(schema, state);
  initShare(app);
  initExport(app);
  syncControls();
  bindControls();
  applyTranslations();
  layout.apply(state);
  setForced(forcedPanel());
  await emit("state", { state, computing: true });
  getJson("/api/health").then((h) => { torchVersion = h.torch; }).catch(() => {});
  await run();
}

start();
