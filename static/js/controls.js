// The sidebar controls: their options (presets, activations, panels), their values from the
// state (sliders offer only what the server accepts), and their events -> change().
import { t } from "./i18n.js";
import { D_FF_STEPS, D_MODEL_STEPS, ffnParams, fitLadder } from "./ladders.js";
import { typedWhole } from "./typed.js";
import { setAttr, setDisabled, setHidden, setText } from "./dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));

/** Show message `key` in `el` (data-i18n too, so a language switch keeps it). */
function setKey(el, key) {
  if (!el || el.dataset.i18n === key) return;
  el.dataset.i18n = key;
  el.textContent = t(key);
}

/**
 * The controls over `boot`, `schema` and `state`; `tokenCount()`/`fixedInputs()` come from
 * bodies.js, `change(updates)` applies a control's new value and `lastForward()` is the
 * last answer (typed text: the controls show the pretrained layer that ran).
 * Returns { setupSelects, syncControls, bindControls, showActualShape, fitToLimit }.
 */
export function makeControls({ boot, schema, state, tokenCount, fixedInputs, change, lastForward }) {
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
    followHeadings();
  }

  // A view's name in the menu is its heading, which may change after the menu is built (the
  // flow's says "gated" under SwiGLU): the option follows it.
  let headingWatch = null;
  function followHeadings() {
    if (headingWatch || typeof MutationObserver !== "function") return;
    headingWatch = new MutationObserver(() => {
      for (const option of $("panel").options) {
        const heading = option.value && document.querySelector(`#${option.value} h2`);
        if (heading && option.textContent !== heading.textContent) option.textContent = heading.textContent;
      }
    });
    for (const id of schema.panel.values.filter(Boolean)) {
      const heading = document.querySelector(`#${id} h2`);
      if (heading) headingWatch.observe(heading, { childList: true, characterData: true, subtree: true });
    }
  }

  // A width slider over a ladder: its positions are the ladder's indices; it reads (and
  // announces) the width itself.
  function syncLadder(id, ladder, value) {
    const slider = $(id);
    setAttr(slider, "max", String(ladder.length - 1));
    slider.value = String(ladder.indexOf(value));
    setAttr(slider, "data-values", JSON.stringify(ladder));
    setAttr(slider, "aria-valuetext", String(value));
    setText($(`${id}-value`), String(value));
  }

  function syncControls() {
    // The sliders offer only the widths the server accepts for this activation (gated: 3 matrices).
    const gated = Boolean(boot.activations.find((a) => a.name === state.activation)?.gated);
    const maxParams = boot.limits.max_params ?? Infinity;
    const dModels = fitLadder(D_MODEL_STEPS, boot.limits.max_d_model, state.d_model,
      (dm) => ffnParams(dm, state.d_ff, gated, state.bias) <= maxParams);
    const dFfs = fitLadder(D_FF_STEPS, boot.limits.max_d_ff, state.d_ff,
      (dff) => ffnParams(state.d_model, dff, gated, state.bias) <= maxParams);
    syncLadder("d_model", dModels, state.d_model);
    syncLadder("d_ff", dFfs, state.d_ff);
    setText($("ratio"), t("controls.ratio", { ratio: (state.d_ff / state.d_model).toFixed(2).replace(/\.?0+$/, "") }));
    const tokens = $("tokens");
    setAttr(tokens, "max", String(boot.limits.max_tokens));
    tokens.value = String(tokenCount());
    // a preset with its own tokens (the tiny one) fixes T: say so beside the greyed slider
    const fixedT = Boolean(fixedInputs());
    setDisabled(tokens, fixedT);
    setHidden($("tokens-note"), !fixedT);
    setAttr(tokens.parentElement, "title", fixedT ? t("controls.tokens_fixed") : "");
    if (fixedT) tokens.setAttribute("aria-describedby", "tokens-note");
    else tokens.removeAttribute("aria-describedby");
    setText($("tokens-value"), String(tokenCount()));
    $("activation").value = state.activation;
    $("bias").checked = state.bias;
    showFormula(gated, state.bias);
    // gated layers name their three biases as the gated flow does (gate, up, down)
    const biasLabel = $("bias").parentElement.querySelector("[data-i18n]");
    const biasKey = gated ? "controls.bias_gated" : "controls.bias";
    if (biasLabel && biasLabel.dataset.i18n !== biasKey) {
      biasLabel.dataset.i18n = biasKey;
      biasLabel.textContent = t(biasKey);
    }
    $("seed").value = String(state.seed);
    $("input_seed").value = String(state.input_seed);
    $("preset").value = state.preset;
    const position = $("position");
    setAttr(position, "max", String(tokenCount() - 1));
    state.position = Math.min(state.position, tokenCount() - 1);
    position.value = String(state.position);
    setText($("position-value"), String(state.position));
    $("scale").value = String(state.scale);
    setText($("scale-value"), String(state.scale));
    $("mode").value = state.mode;
    $("control-dropout").value = String(state.dropout);
    setDisabled($("control-dropout"), state.mode !== "train");
    setText($("control-dropout-value"), String(state.dropout));
    $("panel").value = state.panel;
    $("lang").value = state.lang || document.documentElement.lang;
    // Typed text: the (locked) controls show the pretrained layer that ran, whatever re-synced them.
    if (state.source === "text" && lastForward()?.config) showActualShape(lastForward().config);
  }

  function ladderValue(el) {
    return JSON.parse(el.dataset.values)[Number(el.value)];
  }

  function bindControls() {
    $("preset").addEventListener("change", (e) => change({ preset: /** @type {HTMLInputElement} */ (e.target).value }));
    $("d_model").addEventListener("input", (e) => change({ d_model: ladderValue(e.target) }));
    $("d_ff").addEventListener("input", (e) => change({ d_ff: ladderValue(e.target) }));
    $("tokens").addEventListener("input", (e) => change({ tokens: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
    $("activation").addEventListener("change", (e) => change({ activation: /** @type {HTMLInputElement} */ (e.target).value }));
    $("bias").addEventListener("change", (e) => change({ bias: /** @type {HTMLInputElement} */ (e.target).checked }));
    for (const id of ["seed", "input_seed"]) {
      $(id).addEventListener("change", (e) => {
        const n = typedWhole(e.target, schema[id].max, state[id]);
        if (n !== null) change({ [id]: n });
      });
    }
    $("position").addEventListener("input", (e) => change({ position: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
    $("scale").addEventListener("input", (e) => change({ scale: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
    $("mode").addEventListener("change", (e) => change({ mode: /** @type {HTMLInputElement} */ (e.target).value }));
    $("control-dropout").addEventListener("input", (e) => change({ dropout: Number(/** @type {HTMLInputElement} */ (e.target).value) }));
    $("panel").addEventListener("change", (e) => change({ panel: /** @type {HTMLInputElement} */ (e.target).value }));
    $("lang").addEventListener("change", (e) => change({ lang: /** @type {HTMLInputElement} */ (e.target).value }));
  }

  /** The header's formula and the gated note name the biases only when the layer has them. */
  function showFormula(gated, bias) {
    const nobias = bias ? "" : "_nobias";
    setKey($("formula"), `app.formula${gated ? "_gated" : ""}${nobias}`);
    const note = $("gated-note");
    setHidden(note, !gated);
    setKey(note, `controls.gated_note${nobias}`);
  }

  /** The (disabled) controls show what really ran, e.g. the pretrained layer's shape and GELU. */
  function showActualShape(config) {
    $("activation").value = config.activation;
    $("bias").checked = config.bias;
    showFormula(config.gated, config.bias);
    setText($("d_model-value"), String(config.d_model));
    setText($("d_ff-value"), String(config.d_ff));
    setText($("tokens-value"), String(config.num_tokens));
    setText($("ratio"), t("controls.ratio", {
      ratio: (config.d_ff / config.d_model).toFixed(2).replace(/\.?0+$/, ""),
    }));
  }

  /**
   * After a change of activation or biases: a d_ff the server would refuse with the new
   * choice (SwiGLU's three matrices at 4096 x 16384: 201M parameters over a 150M limit) is
   * lowered to the widest step that fits, and a note under d_ff says so; a later change of
   * d_ff, d_model or the preset hides the note. Returns true when d_ff was lowered.
   */
  function fitToLimit(updates) {
    const note = $("d_ff-fitted");
    const relevant = "activation" in updates || "bias" in updates;
    if (!relevant) {
      if (note && ("d_ff" in updates || "d_model" in updates || "preset" in updates)) note.hidden = true;
      return false;
    }
    const gated = Boolean(boot.activations.find((a) => a.name === state.activation)?.gated);
    const limit = boot.limits.max_params ?? Infinity;
    const params = ffnParams(state.d_model, state.d_ff, gated, state.bias);
    if (params <= limit) return false;
    const fits = D_FF_STEPS.filter((s) => s <= boot.limits.max_d_ff && s < state.d_ff
      && ffnParams(state.d_model, s, gated, state.bias) <= limit);
    if (!fits.length) return false; // nothing narrower fits: the server's refusal says why
    const was = state.d_ff;
    state.d_ff = fits[fits.length - 1];
    if (note) {
      note.textContent = t("controls.d_ff_fitted", {
        d_ff: state.d_ff, was, activation: $("activation").selectedOptions[0]?.textContent ?? state.activation,
        params: params.toLocaleString("en-US"), limit: limit.toLocaleString("en-US"),
      });
      note.hidden = false;
    }
    return true;
  }

  return { setupSelects, syncControls, bindControls, showActualShape, fitToLimit };
}
