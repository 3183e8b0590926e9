// The weight grid of the own-data source: W1, b1, W2, b2 as number inputs, for
// d_model, d_ff <= 8 and non-gated activations, so a class can type a hand-made example.
import { t } from "../i18n.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const GRID_MAX = 8;
let grid = null; // { key, values: { w1, b1, w2, b2 } }
/** @type {(values: object) => void} */
let onChange = () => {};
let loading = null;

function shapes(st) {
  const s = { w1: [st.d_model, st.d_ff], w2: [st.d_ff, st.d_model] };
  if (st.bias) Object.assign(s, { b1: [st.d_ff], b2: [st.d_model] });
  return s;
}

function usable(st, boot) {
  const gated = boot.activations.find((a) => a.name === st.activation)?.gated;
  return st.d_model <= GRID_MAX && st.d_ff <= GRID_MAX && !gated;
}

const keyOf = (st) => `${st.d_model}x${st.d_ff}:${st.bias}`;

/** The typed weights for this state, or null when the grid does not apply. */
export function gridWeights(st, boot) {
  if (!grid || !usable(st, boot) || grid.key !== keyOf(st)) return null;
  const out = {};
  for (const name of Object.keys(shapes(st))) out[name] = grid.values[name];
  return out;
}

function round(x) {
  return Math.round(x * 10) / 10;
}

async function startValues(st, boot) {
  const tiny = boot.presets.find((p) => p.weights && p.d_model === st.d_model && p.d_ff === st.d_ff && p.bias === st.bias);
  if (tiny) return structuredClone(tiny.weights);
  const response = await fetch("/api/forward", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ d_model: st.d_model, d_ff: st.d_ff, activation: st.activation, seed: st.seed, bias: st.bias, num_tokens: 1, include_weights: true }),
  });
  const data = await response.json();
  const values = {};
  for (const [name, w] of Object.entries(data.weights)) values[name] = w.map((v) => (Array.isArray(v) ? v.map(round) : round(v)));
  return values; // the seeded weights to one decimal: easy to read aloud and to change
}

function table(name, values) {
  const el = document.createElement("table");
  const caption = document.createElement("caption");
  const matrix = Array.isArray(values[0]);
  const label = t(`grid.${name}`);
  const size = matrix ? `${values.length} × ${values[0].length}` : String(values.length);
  caption.textContent = `${label} [${size}]`;
  el.append(caption);
  const rows = matrix ? values : [values];
  rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    row.forEach((v, j) => {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "text";
      input.inputMode = "decimal";
      input.value = String(v);
      Object.assign(input.dataset, { name, i: String(i), j: String(j), matrix: String(matrix) });
      input.setAttribute("aria-label", matrix ? t("grid.cell", { name: t(`grid.${name}`), row: i + 1, col: j + 1 }) : t("grid.entry", { name: t(`grid.${name}`), index: j + 1 }));
      td.append(input);
      tr.append(td);
    });
    el.append(tr);
  });
  return el;
}

function draw(st) {
  $("weight-grid").replaceChildren(...Object.keys(shapes(st)).map((name) => table(name, grid.values[name])));
}

/** Rebuild the grid when the shape changed (values kept while the shape stays). */
export async function resetGrid(st, boot) {
  if (!st || !$("own-weights").checked || st.source !== "own") {
    $("weight-grid").replaceChildren();
    $("grid-note").textContent = "";
    return;
  }
  if (!usable(st, boot)) {
    $("weight-grid").replaceChildren();
    $("grid-note").textContent = t("grid.too_big", { max: GRID_MAX });
    return;
  }
  $("grid-note").textContent = t("grid.note");
  const key = keyOf(st);
  if (grid?.key === key) {
    if (!$("weight-grid").childElementCount) draw(st);
    return;
  }
  if (st.w && fits(st.w, st)) { // typed weights from a link
    grid = { key, values: structuredClone(st.w) };
    draw(st);
    return;
  }
  if (loading === key) return;
  loading = key;
  const values = await startValues(st, boot);
  loading = null;
  grid = { key, values };
  draw(st);
  onChange(structuredClone(values));
}

/** True when `w` has exactly the shapes this state needs (a link's w for another shape does not). */
function fits(w, st) {
  const need = shapes(st);
  const sizeOf = (v) => (Array.isArray(v[0]) ? [v.length, v[0].length] : [v.length]);
  return Object.keys(need).every((k) => w[k] && String(sizeOf(w[k])) === String(need[k]))
    && Object.keys(w).every((k) => k in need);
}

/** Typed numbers update the weights; a bad cell is marked and named, nothing is sent. */
export function bindGrid(changed) {
  onChange = changed;
  $("weight-grid").addEventListener("input", (e) => {
    const input = /** @type {HTMLInputElement} */ (e.target);
    if (!grid || input.tagName !== "INPUT") return;
    const text = input.value.trim().replace("−", "-");
    const x = text === "" ? NaN : Number(text);
    const { name, i, j, matrix } = input.dataset;
    if (!Number.isFinite(x)) {
      input.setAttribute("aria-invalid", "true");
      const where = matrix === "true"
        ? t("grid.cell", { name: t(`grid.${name}`), row: Number(i) + 1, col: Number(j) + 1 })
        : t("grid.entry", { name: t(`grid.${name}`), index: Number(j) + 1 });
      $("own-error").textContent = t("grid.bad", { where, value: text.slice(0, 20) });
      return;
    }
    input.removeAttribute("aria-invalid");
    if (!$("weight-grid").querySelector('[aria-invalid="true"]')) $("own-error").textContent = "";
    if (matrix === "true") grid.values[name][Number(i)][Number(j)] = x;
    else grid.values[name][Number(j)] = x;
    onChange(structuredClone(grid.values));
  });
}
