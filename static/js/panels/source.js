// The input source: random tokens (the core), your own numbers (paste/upload, weight grid),
// or a typed text run through the pretrained all-MiniLM-L6-v2 layer. See static/js/inputs.js.
import { ApiError, getJson, LatestOnly } from "../api.js";
import { refusalDetails } from "../errors.js";
import { emit, on } from "../bus.js";
import { t } from "../i18n.js";
import { registerSource } from "../inputs.js";
import { ParseError, parseNpy, parseText } from "../parse.js";
import { bindGrid, gridWeights, resetGrid } from "./weightgrid.js";
import { setAttr, setHidden } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const boot = JSON.parse(document.getElementById("boot").textContent);
const LOCKED = { text: ["preset", "d_model", "d_ff", "tokens", "activation", "bias", "seed", "input_seed"], own: ["d_model", "tokens"] };
const tokenizer = new LatestOnly();
let state = null;
let own = null; // { tokens: [[...]] } once applied: the state's `x` (in the link's fragment)
let layer = null; // the /api/weights/upload answer once a layer file is uploaded
let textTimer = null;

const isGated = (name) => Boolean(boot.activations.find((a) => a.name === name)?.gated);

registerSource("own", (body, st) => {
  if (!st.x && !layer) return body; // until data is applied, random tokens as before
  const out = { ...body };
  if (st.x) {
    out.tokens = st.x;
    delete out.num_tokens;
    delete out.input_seed;
  }
  if (layer) { // the uploaded layer fixes the shapes; the server holds its weights
    Object.assign(out, { d_model: layer.d_model, d_ff: layer.d_ff, bias: layer.bias, weights_id: layer.weights_id });
    if (isGated(out.activation) !== layer.gated) out.activation = layer.activation;
    delete out.weights;
    return out;
  }
  const weights = $("own-weights").checked ? gridWeights(st, boot) : null;
  if (weights) out.weights = weights;
  return out;
});

registerSource("text", (body, st) => ({ model: "minilm-l6", layer: st.layer, text: st.text }));

function showSource(st) {
  for (const radio of document.querySelectorAll('input[name="source"]')) radio.checked = radio.value === st.source;
  setHidden($("source-own"), st.source !== "own");
  setHidden($("source-text"), st.source !== "text");
  setAttr(document.body, "data-source", st.source);
  const locked = [...(st.source === "own" && !own ? [] : LOCKED[st.source] || []),
    ...(st.source === "own" && layer ? ["d_model", "d_ff", "bias"] : [])];
  for (const id of LOCKED.text) {
    const el = $(id);
    if (locked.includes(id)) el.disabled = true;
    else if (id !== "tokens") el.disabled = false; // main.js owns the tokens slider otherwise
  }
  if ($("text-input").value !== st.text && document.activeElement !== $("text-input")) $("text-input").value = st.text;
  $("layer").value = String(st.layer);
}

// ---- own data ----

function ownError(err) {
  const message = err instanceof ParseError ? t(err.key, { ...err.params, unit: t(`parse.unit_${err.params.unit}`) }) : refusalDetails(err);
  $("own-error").textContent = t("own.error", { message });
}

function applyMatrix(matrix) {
  const rows = matrix.length;
  const cols = matrix[0].length;
  const limits = boot.limits;
  if (rows > limits.max_tokens) throw new ParseError("parse.too_many_rows", { count: rows, max: limits.max_tokens });
  if (cols > limits.max_d_model) throw new ParseError("parse.too_wide", { count: cols, max: limits.max_d_model });
  matrix.forEach((row, i) => row.forEach((x, j) => {
    if (Math.abs(x) > limits.max_abs_value) throw new ParseError("parse.too_big", { line: i + 1, cell: j + 1, max: limits.max_abs_value });
  }));
  own = { tokens: matrix };
  $("own-error").textContent = "";
  $("own-status").textContent = t("own.using", { rows, cols });
  $("own-status").dataset.rows = String(rows);
  emit("change", { source: "own", preset: "custom", d_model: cols, tokens: rows, x: matrix, position: Math.min(state?.position ?? 0, rows - 1) });
}

function applyText() {
  try {
    applyMatrix(parseText($("own-data").value));
  } catch (err) {
    ownError(err); // the charts and the previous data stay as they are
  }
}

async function applyFile(file) {
  try {
    if (file.name.toLowerCase().endsWith(".npy")) {
      const matrix = parseNpy(await file.arrayBuffer());
      applyMatrix(matrix);
      $("own-data").value = matrix.map((row) => row.join(", ")).join("\n");
    } else {
      const text = await file.text();
      const matrix = parseText(text);
      applyMatrix(matrix);
      $("own-data").value = text;
    }
  } catch (err) {
    ownError(err);
  }
}

function layerText(answer) {
  return t("own.layer_using", {
    family: answer.family, d_model: answer.d_model, d_ff: answer.d_ff, activation: answer.activation,
    gated: answer.gated ? t("own.layer_gated") : "",
    bias: t(answer.bias ? "own.layer_bias" : "own.layer_no_bias"),
  });
}

/** Send a layer file to the server as it is (no JSON), keep the id it answers. */
async function applyLayer(file) {
  const status = $("own-layer-status");
  status.textContent = t("own.layer_reading", { name: file.name });
  try {
    const response = await fetch(`/api/weights/upload?filename=${encodeURIComponent(file.name)}`, {
      method: "POST", body: file, headers: { "content-type": "application/octet-stream" },
    });
    const answer = await response.json();
    if (!response.ok) throw new ApiError(response.status, answer); // said in the page's language
    layer = answer;
    $("own-error").textContent = "";
    status.textContent = layerText(answer);
    status.dataset.weightsId = answer.weights_id;
    status.dataset.dFf = String(answer.d_ff);
    emit("change", { source: "own", preset: "custom", d_model: answer.d_model, d_ff: answer.d_ff, bias: answer.bias,
      activation: isGated(state?.activation) === answer.gated ? state.activation : answer.activation });
  } catch (err) {
    status.textContent = layer ? layerText(layer) : "";
    ownError(err); // the previous layer (or none) stays in use
  }
}

// ---- typed text ----

function textChanged() {
  clearTimeout(textTimer);
  textTimer = setTimeout(async () => {
    const text = $("text-input").value;
    if (!text.trim()) return;
    try {
      const answer = await tokenizer.post("/api/tokenize", { model: "minilm-l6", text });
      if (answer.stale) return;
      $("text-error").textContent = "";
      const count = answer.data.tokens.length;
      emit("change", { source: "text", text, tokens: count, position: Math.min(state.position, count - 1) });
    } catch (err) {
      $("text-error").textContent = t("text.error", { message: refusalDetails(err) });
    }
  }, 250);
}

function renderTokens(tokens, special) {
  $("text-tokens").replaceChildren(...tokens.map((tok, i) => {
    const li = document.createElement("li");
    li.dataset.special = String(Boolean(special?.[i]));
    const index = document.createElement("small");
    index.textContent = String(i);
    li.append(index, tok);
    return li;
  }));
}

async function checkModel() {
  try {
    const [model] = await getJson("/api/models");
    if (!model.available) {
      $("text-error").textContent = t("text.unavailable", { install: model.install });
      document.querySelector('input[name="source"][value="text"]').disabled = true;
    }
  } catch {
    // the status line of the page reports a server that cannot be reached
  }
}

function bind() {
  for (const radio of document.querySelectorAll('input[name="source"]')) {
    radio.addEventListener("change", () => {
      if (radio.value === "text") {
        clearTimeout(textTimer);
        tokenizer.post("/api/tokenize", { model: "minilm-l6", text: state.text }).then((answer) => {
          if (answer.stale) return;
          const count = answer.data.tokens.length;
          emit("change", { source: "text", preset: "custom", tokens: count, position: Math.min(state.position, count - 1) });
        }).catch((err) => { $("text-error").textContent = t("text.error", { message: refusalDetails(err) }); });
      } else if (radio.value === "own" && own) {
        emit("change", { source: "own", preset: "custom", d_model: own.tokens[0].length, tokens: own.tokens.length,
          position: Math.min(state.position, own.tokens.length - 1) });
      } else {
        emit("change", { source: radio.value });
      }
    });
  }
  $("own-apply").addEventListener("click", applyText);
  $("own-file").addEventListener("change", (e) => { if (/** @type {HTMLInputElement} */ (e.target).files[0]) applyFile(/** @type {HTMLInputElement} */ (e.target).files[0]); /** @type {HTMLInputElement} */ (e.target).value = ""; });
  $("own-layer-file").addEventListener("change", (e) => { if (/** @type {HTMLInputElement} */ (e.target).files[0]) applyLayer(/** @type {HTMLInputElement} */ (e.target).files[0]); /** @type {HTMLInputElement} */ (e.target).value = ""; });
  $("own-weights").addEventListener("change", () => {
    resetGrid(state, boot);
    if (!$("own-weights").checked) emit("change", { w: null });
  });
  $("text-input").addEventListener("input", textChanged);
  $("layer").addEventListener("change", (e) => emit("change", { layer: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
  bindGrid((values) => emit("change", { w: values }));
}

/** Own numbers from a link (the fragment's x and w): shown as if pasted and typed. */
function adoptLinked(st) {
  if (st.x && own?.tokens !== st.x) {
    own = { tokens: st.x };
    if (!$("own-data").value.trim()) $("own-data").value = st.x.map((row) => row.join(", ")).join("\n");
    $("own-status").textContent = t("own.using", { rows: st.x.length, cols: st.x[0].length });
    $("own-status").dataset.rows = String(st.x.length);
  } else if (!st.x) {
    own = null;
  }
  if (st.w && !$("own-weights").checked) $("own-weights").checked = true;
}

on("state", ({ state: st }) => {
  state = st;
  adoptLinked(st);
  showSource(st);
  resetGrid(st, boot);
});
on("forward", ({ data, state: st }) => {
  state = st;
  showSource(st);
  if (data.tokens) renderTokens(data.tokens, data.special);
  if (!$("weight-grid").childElementCount) resetGrid(st, boot);
});
on("language", () => {
  if (own) $("own-status").textContent = t("own.using", { rows: own.tokens.length, cols: own.tokens[0].length });
  if (layer) $("own-layer-status").textContent = layerText(layer);
});

bind();
checkModel();
