// The readout beside the flow: the layer's shapes, its parameter count per weight matrix and
// bias (the server's counts), and the forward's FLOPs.
import { setAttr, setHidden, setText } from "./dom.js";
import { count } from "./format.js";
import { t } from "./i18n.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));

/** Parameter count, FLOPs and the formula with the current shapes. */
export function renderReadout(data) {
  const c = data.config;
  const shapes = c.gated ? "readout.shapes_gated" : "readout.shapes";
  setText($("readout-shapes"), t(shapes, { t: c.num_tokens, d_model: c.d_model, d_ff: c.d_ff }));
  renderMatrices(data);
  setText($("readout-params"), count(data.params.total));
  setAttr($("readout-params"), "data-value", String(data.params.total));
  setText($("readout-flops"), count(data.flops.total));
  setText($("readout-flops-note"), t("readout.flops_note", {
    per_token: count(data.flops.per_token),
    tokens: count(c.num_tokens),
  }));
}

/** Order of the parameter tensors in the readout (the API's names; gated: gate, up, down). */
const MATRICES = { plain: ["w1", "b1", "w2", "b2"], gated: ["w_gate", "b_gate", "w1", "b1", "w2", "b2"] };

/** One line per weight matrix and bias, with its shape and the server's parameter count. */
function renderMatrices(data) {
  const c = data.config;
  const list = $("readout-matrices");
  const kind = c.gated ? "gated" : "plain";
  const shape = { w_gate: [c.d_model, c.d_ff], w1: [c.d_model, c.d_ff], w2: [c.d_ff, c.d_model],
    b_gate: [c.d_ff], b1: [c.d_ff], b2: [c.d_model] };
  const lines = MATRICES[kind].filter((name) => name in data.params).map((name) => {
    const params = { shape: shape[name].join(" × "), n: count(data.params[name]) };
    const text = c.gated ? t(`readout.matrix_gated.${name}`, params) : t(`readout.matrix.${name}`, params);
    return { name, value: String(data.params[name]), text };
  });
  // the same lines (a value step, a drag over T): the list stays as it is
  const shown = JSON.stringify(lines);
  if (list.ffnShown !== shown) {
    list.ffnShown = shown;
    list.replaceChildren(...lines.map(({ name, value, text }) => {
      const li = document.createElement("li");
      li.dataset.matrix = name;
      li.dataset.value = value;
      li.textContent = text;
      return li;
    }));
  }
  setHidden($("readout-names"), !c.gated);
}
