// Page glue: controls <-> state <-> URL, requests, rendering. Math lives on the server.
// Classroom features (layout, lesson, share, export) get the `app` object below.
import { getJson, LatestOnly } from "./api.js";
import { emit, on } from "./bus.js";
import { makeBodies } from "./bodies.js";
import { makeControls } from "./controls.js";
import { afterDrag, DragQueue } from "./drag.js";
import { tokenLabels } from "./inputs.js";
import "./panels/index.js";
import { initLayout } from "./classroom/layout.js";
import { initShare } from "./classroom/share.js";
import { initDeckKeys } from "./classroom/deckkeys.js";
import { initExport } from "./export/index.js";
import { initSession } from "./session/index.js";
import { applyTranslations, loadLanguage, pickLanguage, t } from "./i18n.js";
import { liveView, setBusy, setForced, SHOWN_WAIT_MS } from "./live.js";
import { initLesson } from "./lesson/engine.js";
import { STEPS } from "./lesson/steps.js";
import { HIDEABLE, makeSchema, parseState, writeState } from "./state.js";
import { makeRefusals } from "./refusals.js";
import { renderReadout } from "./readout.js";
import { renderFlow, renderPerturb, renderSparsity } from "./views.js";

const boot = JSON.parse(document.getElementById("boot").textContent);
const schema = makeSchema(boot, { steps: STEPS.length });
/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const forwardRequester = new LatestOnly({ reuse: true });
const perturbRequester = new LatestOnly({ reuse: true });
/** Settings that change what the server computes; the others only change the view. */
const COMPUTED = ["preset", "d_model", "d_ff", "activation", "tokens", "bias", "seed", "input_seed",
  "position", "scale", "mode", "dropout", "source", "text", "layer", "x", "w", "dropout_seed"];
/** The views drawn from /api/forward's answer (busy while it is pending). */
const FORWARD_VIEWS = ["flow", "sparsity", "readout", "neuron"];

const parsed = parseState(schema, window.location.search, window.location.hash);
let state = parsed.state;
let torchVersion = "";
let forwardSeq = 0; // the newest forward request (older answers are never drawn)
let changeSeq = 0; // the latest change of settings (only its run writes the address bar)
let lastChanged = null; // the control the user changed last (where a refusal is shown)
let lastForward = null;
let lastForwardBody = null;
let lastPerturbBody = null;
let forwardDone = Promise.resolve(); // the newest forward request (export waits for it)
let lastPerturb = null;
let lastForwardMs = 0; // how long the last /api/forward answer took (ms)
const dragQueue = new DragQueue(); // a dragged slider: one forward request in flight
let forwardDrawing = Promise.resolve(); // the forward answer being drawn
let layout = null;

// The request bodies and presets (bodies.js), the sidebar controls (controls.js) and where
// refusals are shown (refusals.js): this module keeps the state, the URL and the run loop.
const { presetById, fixedInputs, requestBody, perturbBody, tokenCount, applyPreset, dropStalePreset } =
  makeBodies(boot, state);
const { setupSelects, syncControls, bindControls, showActualShape, fitToLimit } = makeControls({
  boot, schema, state, tokenCount, fixedInputs, change: (updates) => change(updates),
  lastForward: () => lastForward,
});
const { setStatus, showError, clearError, reshow } = makeRefusals({ lastChanged: () => lastChanged });

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
  fitToLimit(updates); // SwiGLU picked at a width only ReLU fits: d_ff lowered, and said
  if (lang !== undefined && lang !== state.lang) {
    state.lang = lang;
    await switchLanguage(lang);
  }
  syncControls();
  layout.apply(state);
  setForced(forcedPanel());
  const computing = force || COMPUTED.some((k, i) => state[k] !== before[i]);
  await emit("state", { state, computing });
  if (!computing) {
    writeState(schema, state);
    return;
  }
  // The address bar once the answer is drawn (or refused): replaceState costs ~25 ms of the
  // browser's CPU, which on a shared machine would slow the server and the redraw.
  // Only the latest change writes it: an older run ending later would name settings whose
  // answer is not drawn yet.
  // During a drag, once the pointer lets go (drag.js afterDrag).
  const mine = ++changeSeq;
  const write = () => { if (mine === changeSeq) writeState(schema, state); };
  run().finally(() => { if (mine === changeSeq) afterDrag(write); });
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

// ---- requests and rendering ----

function sectionsOf(ids) {
  return ids.map($).filter(Boolean);
}

/**
 * Recompute for the current state: /api/forward always (the flow, sparsity and readout, and
 * the base of the other views), the other views only when seen (static/js/live.js). A newer
 * call aborts the older requests (LatestOnly), so an old answer is never drawn.
 */
function run() {
  const body = requestBody();
  const pBody = perturbBody();
  // /api/forward first: its fetch starts before the other views mark themselves busy.
  // A dragged slider's value waits for the answer in flight (drag.js) instead of cancelling it.
  if (!dragQueue.hold(body)) forwardDone = requestForward(body);
  emit("compute", { body, pBody, state });
  perturbView.invalidate();
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
  // The request is sent before the page marks the wait: marking reads the layout (a few
  // ms after a redraw), time the server can spend computing the answer.
  const pending = forwardRequester.post("/api/forward", body);
  dragQueue.sent();
  setStatus(() => t("status.loading"), "loading");
  // the last answer took 0.1 s or more: this one will too, so the wait is shown at once
  for (const section of sections) setBusy(section, true, { now: lastForwardMs >= SHOWN_WAIT_MS });
  try {
    const answer = await pending;
    const newest = mine === forwardSeq;
    const seqDrawn = forwardRequester.seq;
    if (newest) {
      // a value that waited during a drag is requested now, while this answer is drawn
      const next = dragQueue.answered();
      if (next) forwardDone = requestForward(next);
    }
    if (answer.stale || !newest) return;
    // one answer drawn at a time: the next one's drawing starts when this one's is done
    const before = forwardDrawing;
    /** @type {(value?: unknown) => void} */
    let drawn = () => {};
    forwardDrawing = new Promise((resolve) => { drawn = resolve; });
    try {
      await before;
      await drawForward(answer, body, () => mine === forwardSeq);
    } finally {
      drawn();
    }
    document.body.dataset.forwardSeq = String(seqDrawn);
  } catch (err) {
    if (mine === forwardSeq) {
      // refused or failed: a value that waited during a drag is still asked for
      const next = dragQueue.answered();
      if (next) forwardDone = requestForward(next);
    }
    if (mine === forwardSeq) showError(err, sections);
  } finally {
    if (mine === forwardSeq) for (const section of sections) setBusy(section, false);
  }
}

/**
 * The rows of an answer's plots: named by their tokens (typed text), and, while the Tokens
 * slider can move, as many as it may ask for (the plots keep room for the widest number).
 */
function rowsOf(data) {
  return { yLabels: tokenLabels(data.tokens), rowsUpTo: fixedInputs() ? undefined : boot.limits.max_tokens };
}

/**
 * Draw one forward answer: plots, captions and readouts together, then the status. The
 * controls show the shape that ran only for the newest request's answer: an older one drawn
 * while a newer is computed (a drag, a lesson left) must not put its shape back on them.
 * @param {any} answer
 * @param {any} body
 * @param {() => boolean} [newest] whether the answer's request is still the newest
 */
async function drawForward(answer, body, newest = () => true) {
  const sections = sectionsOf(FORWARD_VIEWS);
  if (!answer.reused) lastForwardMs = answer.ms;
  clearError(sections);
  lastForward = answer.data;
  lastForwardBody = body;
  const labels = rowsOf(answer.data);
  // Plots, captions and readouts of one answer together: no mix of two configurations.
  await Promise.all([renderFlow(answer.data, labels), renderSparsity(answer.data, labels)]);
  renderReadout(answer.data);
  if (newest()) showActualShape(answer.data.config);
  await emit("forward", { data: answer.data, body, state });
  // the request's round trip as the status says, not the page's start-up or drawing
  const ms = Math.round(answer.roundTripMs);
  setStatus(() => (torchVersion ? t("status.ready", { torch: torchVersion, ms }) : t("status.ready_short", { ms })), "ready");
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
    await renderPerturb(answer.data, rowsOf(answer.data));
    await emit("perturb", { data: answer.data, body: pBody, state });
    document.body.dataset.perturbSeq = String(perturbRequester.seq);
  } catch (err) {
    showError(err, [section]);
  }
}

const perturbView = liveView($("perturb"), requestPerturb);

function rerender() {
  if (lastForward) {
    renderFlow(lastForward, rowsOf(lastForward));
    renderSparsity(lastForward, rowsOf(lastForward));
    renderReadout(lastForward);
  }
  if (lastPerturb) renderPerturb(lastPerturb, rowsOf(lastPerturb));
  reshow();
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
  dropStalePreset(); // a link's settings that are not its preset's are Custom (T may differ)
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
  initDeckKeys(app); // an embed in slides: the clicker's keys go to the deck
  initSession(app);
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
