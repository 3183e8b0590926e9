// Watching an FFN learn a memory: POST /api/train streams NDJSON progress lines; the loss,
// accuracy and dead-unit curves grow as they arrive, side by side for the FFN, the model
// without it (a linear map) and the same-budget linear control (the FFN's own two maps
// without the activation: its parameter count, still linear), with each model's parameter
// count from the server. Cancel closes the connection (the server stops). The capacity
// sweep runs on request.
import { emit, on } from "../bus.js";
import { bars, lines, SERIES } from "../charts.js";
import { count, magnitude, percent } from "../format.js";
import { t } from "../i18n.js";
import { postNdjson } from "../stream.js";
import { setText } from "../dom.js";

const NEUTRAL = "#9a9a9a"; // the value bars of the classes a unit does not write most

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const section = $("train");
const error = section.querySelector(".panel-error");
const D_FF = [4, 8, 16, 32, 64, 128, 256];
const ACTIVATIONS = ["relu", "gelu", "silu"];
const LR = [0.003, 0.01, 0.03, 0.1, 0.3, 1];
const STEPS = [100, 300, 1000];
const TASK = { task: "memory", d_model: 16, num_pairs: 64, num_classes: 4 };
const CAPACITY_WIDTHS = [4, 8, 16, 32, 64, 128];

let state = null;
let controller = null;
let capacityController = null;
let runs = []; // [{ kind, ffn, records: [], final }]
/** The models compared: the FFN, the linear map, the linear map with the FFN's budget. */
const KINDS = ["ffn", "linear", "same_budget"];
const deadHistory = new Map(); // "activation lr" -> [{ step, dead }] of finished FFN runs
let lastCapacity = null;

function settings() {
  return {
    d_ff: state?.train_d_ff ?? 64,
    activation: state?.train_act ?? "relu",
    lr: state?.train_lr ?? 0.03,
    steps: state?.train_steps ?? 300,
    compare: state?.train_compare ?? true,
    seed: state?.seed ?? 0,
  };
}

function fillSelect(el, values, label) {
  el.replaceChildren(...values.map((v) => new Option(label(v), String(v))));
}

const HINTS = {
  "plot-train-loss": "train.hint_loss", "plot-train-accuracy": "train.hint_accuracy",
  "plot-train-dead": "train.hint_dead", "plot-train-key": "train.hint_key",
  "plot-train-value": "train.hint_value", "plot-train-capacity": "train.hint_capacity",
};

/** What an empty plot says until its first picture (shown by CSS while the plot is empty). */
function setupHints() {
  for (const [id, key] of Object.entries(HINTS)) $(id).dataset.hint = t(key);
}

function setupControls() {
  setupHints();
  fillSelect($("train-d_ff"), D_FF, String);
  fillSelect($("train-activation"), ACTIVATIONS, (a) => t(`train.act.${a}`));
  fillSelect($("train-lr"), LR, String);
  fillSelect($("train-steps"), STEPS, String);
}

function syncControls() {
  const s = settings();
  $("train-d_ff").value = String(s.d_ff);
  $("train-activation").value = s.activation;
  $("train-lr").value = String(s.lr);
  $("train-steps").value = String(s.steps);
  $("train-compare").checked = s.compare;
  setText($("train-task"), t("train.task", {
    pairs: TASK.num_pairs, d_model: TASK.d_model, classes: TASK.num_classes, d_ff: s.d_ff,
  }));
}

function runName(run) {
  return t({ ffn: "train.with_ffn", linear: "train.without_ffn", same_budget: "train.same_budget" }[run.kind]);
}

function drawCurves() {
  const series = (key) => runs.map((run, i) => ({
    name: runName(run), color: SERIES[i], x: run.records.map((r) => r.step), y: run.records.map((r) => r[key]),
  }));
  /** @type {Array<{ name: string, color: string, dash?: string, x: number[], y: number[] }>} */
  const dead = [...deadHistory.entries()].slice(-3).map(([label, points], i) => ({
    name: label, color: SERIES[2 + i], dash: "dot", x: points.map((p) => p.step), y: points.map((p) => p.dead),
  }));
  for (const run of runs.filter((r) => r.ffn && !r.final)) {
    dead.push({
      name: t("train.dead_now", { activation: t(`train.act.${run.activation}`), lr: run.lr }),
      color: SERIES[0], x: run.records.map((r) => r.step), y: run.records.map((r) => r.dead_units),
    });
  }
  // x: the whole run, 0..steps, so the curves end where training stops; dead units from 0
  // (an all-zero count would otherwise get Plotly's -1..1 range).
  const xRange = [0, settings().steps];
  const mostDead = Math.max(1, ...dead.flatMap((d) => d.y));
  return Promise.all([
    lines($("plot-train-loss"), series("loss"), {
      title: t("train.loss_title"), xTitle: t("train.step"), yTitle: t("train.loss"), yType: "log",
      xRange, filename: "train-loss",
    }),
    lines($("plot-train-accuracy"), series("accuracy"), {
      title: t("train.accuracy_title"), xTitle: t("train.step"), yTitle: t("train.accuracy"),
      xRange, yRange: [0, 1.05], filename: "train-accuracy",
    }),
    lines($("plot-train-dead"), dead, {
      title: t("train.dead_title"), xTitle: t("train.step"), yTitle: t("train.dead_units"),
      xRange, yRange: [0, mostDead * 1.05], integerY: true, filename: "train-dead-units",
    }),
  ]);
}

let drawPending = false;

/** Redraw the curves at most once per frame, however fast the lines arrive. */
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    drawCurves();
  });
}

function showProgress() {
  const s = settings();
  const done = runs.reduce((sum, run) => sum + (run.records.at(-1)?.step ?? 0), 0);
  const progress = /** @type {HTMLProgressElement} */ (/** @type {unknown} */ (document.getElementById("train-progress")));
  progress.max = runs.length * s.steps;
  progress.value = done;
  progress.dataset.value = String(done);
}

const READING = ["train-result", "train-models", "train-reading", "plot-train-key", "plot-train-value"];

function showResult() {
  for (const id of READING) delete $(id).dataset.stale;
  const done = (kind) => runs.find((r) => r.kind === kind && r.final);
  const withFfn = done("ffn");
  const without = done("linear");
  const same = done("same_budget");
  const result = $("train-result");
  if (withFfn) result.dataset.withFfn = String(withFfn.final.memorised);
  if (without) result.dataset.withoutFfn = String(without.final.memorised);
  if (same) result.dataset.sameBudget = String(same.final.memorised);
  // the same-budget verdict says what the numbers show, whichever way they came out; a
  // single run says its own result (the table below holds every model's numbers)
  if (withFfn && same) {
    result.textContent = t(
      same.final.memorised < withFfn.final.memorised ? "train.budget_fewer" : "train.budget_not_fewer",
      { params: count(same.final.params.total), ffn: count(withFfn.final.memorised),
        same: count(same.final.memorised), pairs: count(same.final.num_pairs) },
    );
  } else {
    result.textContent = runs.filter((r) => r.final).map((run) => t("train.result_run", {
      name: runName(run), memorised: count(run.final.memorised), pairs: count(run.final.num_pairs),
      fraction: percent(run.final.accuracy), loss: magnitude(run.final.loss),
    })).join(" · ");
  }
  showModels();
  if (withFfn?.final.reading) showReading(withFfn.final);
}

/** One row per model: its parameter count (the server's), pairs memorised and loss. */
function showModels() {
  const table = $("train-models");
  table.hidden = !runs.some((r) => r.final);
  table.tBodies[0].replaceChildren(...runs.map((run) => {
    const row = document.createElement("tr");
    row.dataset.model = run.kind;
    const f = run.final;
    if (f) {
      row.dataset.params = String(f.params.total);
      row.dataset.memorised = String(f.memorised);
    }
    const cells = [
      runName(run),
      f ? count(f.params.total) : "…",
      f ? t("train.memorised_of", { memorised: count(f.memorised), pairs: count(f.num_pairs), fraction: percent(f.accuracy) }) : "…",
      f ? magnitude(f.loss) : "…",
    ];
    row.replaceChildren(...cells.map((text, i) => {
      const cell = document.createElement(i === 0 ? "th" : "td");
      cell.textContent = text;
      return cell;
    }));
    return row;
  }));
}

function showReading(final) {
  const r = final.reading;
  const fires = new Set(r.fires_on);
  const keys = r.key_cosine.map((_, i) => i);
  const pick = (want) => keys.filter((i) => fires.has(i) === want);
  $("train-reading").textContent = t("train.reading", {
    unit: r.unit, fires: r.fires_on.length, pairs: final.num_pairs, top: r.top_class,
    agreement: r.agreement === null ? "—" : percent(r.agreement),
    // beside the share, what a unit writing one class at random would get
    classes: r.value_logits.length, chance: percent(1 / Math.max(1, r.value_logits.length)),
  });
  $("train-reading").dataset.unit = String(r.unit);
  return Promise.all([
    lines($("plot-train-key"), [
      { name: t("train.fires"), mode: "markers", color: SERIES[0], x: pick(true).map((i) => r.key_cosine[i]), y: pick(true).map((i) => r.key_activation[i]) },
      { name: t("train.silent"), mode: "markers", color: SERIES[1], x: pick(false).map((i) => r.key_cosine[i]), y: pick(false).map((i) => r.key_activation[i]) },
    ], {
      title: t("train.key_title", { unit: r.unit }), xTitle: t("train.cosine"), yTitle: t("train.activation_value"),
      filename: "train-unit-key",
    }),
    bars($("plot-train-value"), r.value_logits.map((_, c) => String(c)), r.value_logits, {
      title: t("train.value_title", { unit: r.unit }), xTitle: t("train.class"), yTitle: t("train.logit"),
      text: r.target_counts.map((n) => t("train.keys_n", { n })),
      // the class it writes most in its own colour (orange and green mean silent / fires
      // in the keys plot beside it)
      colors: r.value_logits.map((_, c) => (c === r.top_class ? SERIES[2] : NEUTRAL)),
      filename: "train-unit-value",
    }),
  ]);
}

function setRunning(running, how) {
  // the curves' empty plots say the run has started (not "Press Train") until points come
  for (const id of ["plot-train-loss", "plot-train-accuracy", "plot-train-dead"]) {
    $(id).dataset.hint = t(running ? "train.hint_running" : HINTS[id]);
  }
  $("train-start").disabled = running;
  $("train-cancel").disabled = !running;
  section.dataset.trainState = how;
  $("train-status").textContent = t(`train.state.${how}`);
}

async function start() {
  controller?.abort();
  controller = new AbortController();
  const { signal } = controller;
  const s = settings();
  error.textContent = "";
  runs = (s.compare ? KINDS : ["ffn"]).map((kind) => ({
    kind, ffn: kind === "ffn", activation: s.activation, lr: s.lr, records: [], final: null,
  }));
  setRunning(true, "running");
  // the last run's result and unit reading stay until this run's arrive: dimmed as stale
  for (const id of READING) $(id).dataset.stale = "1";
  showProgress();
  const logEvery = Math.max(1, Math.round(s.steps / 50));
  const stream = (run) => postNdjson("/api/train", {
    ...TASK, d_ff: s.d_ff, activation: s.activation, lr: s.lr, steps: s.steps, seed: s.seed,
    ffn: run.ffn, ...(run.kind === "same_budget" ? { same_budget: true } : {}), log_every: logEvery,
  }, (record) => {
    if (record.error) throw new Error(record.error);
    if (record.done) run.final = record.final;
    else run.records.push(record);
    section.dataset.records = String(runs.reduce((n, r) => n + r.records.length, 0));
    showProgress();
    scheduleDraw();
  }, signal);
  // two streams at once (the server trains at most two per client by default): the FFN,
  // and the two small linear models one after the other
  const linear = runs.filter((r) => !r.ffn);
  const streams = [
    ...runs.filter((r) => r.ffn).map(stream),
    linear.reduce((chain, run) => chain.then(() => stream(run)), Promise.resolve()),
  ];
  try {
    await Promise.all(streams);
    for (const run of runs.filter((r) => r.ffn)) {
      // a rerun of the same activation and rate replaces its line and moves it last
      const label = t("train.dead_run", { activation: t(`train.act.${run.activation}`), lr: run.lr });
      deadHistory.delete(label);
      deadHistory.set(label, run.records.map((r) => ({ step: r.step, dead: r.dead_units })));
    }
    showResult();
    await drawCurves();
    setRunning(false, "done");
  } catch (err) {
    if (signal.aborted) return; // cancelled: the state says so already
    controller.abort(); // stop the other stream too
    error.textContent = t("teaching.error", { message: err.message });
    setRunning(false, "error");
  }
}

function cancel() {
  controller?.abort();
  setRunning(false, "cancelled");
}

async function capacity() {
  capacityController?.abort();
  capacityController = new AbortController();
  const s = settings();
  const points = [];
  const progress = /** @type {HTMLProgressElement} */ (/** @type {unknown} */ (document.getElementById("train-capacity-progress")));
  progress.max = CAPACITY_WIDTHS.length + 1;
  progress.value = 0;
  section.dataset.capacityState = "running";
  try {
    await postNdjson("/api/train/capacity", {
      task: "memory", d_model: TASK.d_model, activation: s.activation, lr: s.lr, seed: s.seed,
      d_ff_values: CAPACITY_WIDTHS,
    }, (record) => {
      if (record.error) throw new Error(record.error);
      if (record.point) {
        points.push(record.point);
        progress.value = points.length;
      } else if (record.done) {
        lastCapacity = record.final;
      }
    }, capacityController.signal);
    await drawCapacity();
    section.dataset.capacityState = "done";
  } catch (err) {
    if (capacityController.signal.aborted) return;
    error.textContent = t("teaching.error", { message: err.message });
    section.dataset.capacityState = "error";
  }
}

function drawCapacity() {
  if (!lastCapacity) return Promise.resolve();
  const pts = lastCapacity.points;
  const labels = pts.map((p) => (p.d_ff === null ? t("train.no_ffn") : String(p.d_ff)));
  return bars($("plot-train-capacity"), labels, pts.map((p) => p.memorised_fraction), {
    title: t("train.capacity_title", { pairs: lastCapacity.num_pairs }), xTitle: t("train.d_ff"),
    yTitle: t("train.memorised"), text: pts.map((p) => percent(p.memorised_fraction)), yRange: [0, 1.1],
    colors: pts.map((p) => (p.d_ff === null ? SERIES[1] : SERIES[0])), filename: "train-capacity",
  });
}

setupControls();
$("train-start").addEventListener("click", start);
$("train-cancel").addEventListener("click", cancel);
$("train-capacity-start").addEventListener("click", capacity);
$("train-d_ff").addEventListener("change", (e) => emit("change", { train_d_ff: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
$("train-activation").addEventListener("change", (e) => emit("change", { train_act: /** @type {HTMLInputElement} */ (e.target).value }));
$("train-lr").addEventListener("change", (e) => emit("change", { train_lr: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
$("train-steps").addEventListener("change", (e) => emit("change", { train_steps: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
$("train-compare").addEventListener("change", (e) => emit("change", { train_compare: /** @type {HTMLInputElement} */ (e.target).checked }));

let labelled = false;
on("state", ({ state: s }) => {
  state = s;
  if (!labelled) { // the catalog is loaded by the first "state": label the options now
    setupControls();
    labelled = true;
  }
  syncControls();
});
on("language", () => {
  setupControls();
  syncControls();
  if (runs.length) {
    drawCurves();
    if (runs.some((r) => r.final)) showResult();
  }
  drawCapacity();
});
on("panel-state", async ({ id, values }) => {
  if (id !== "train") return;
  const { start: go, capacity: sweep, ...rest } = values;
  if (Object.keys(rest).length) await emit("change", rest);
  if (sweep) capacity();
  if (go) start();
});
