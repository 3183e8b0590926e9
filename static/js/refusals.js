// Refusals where the eye is: the status line, the views a refused request
// would have replaced, and the control that caused it.
import { describeError } from "./errors.js";
import { showRefused } from "./live.js";
import { HIDEABLE } from "./state.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
/** Request fields (422 `loc`) -> the sidebar control that sets them. */
const FIELD_CONTROL = { num_tokens: "tokens", tokens: "tokens", dropout: "dropout", input_seed: "input_seed" };

/**
 * `lastChanged()` names the control the user changed last (where a refusal without a field
 * is shown). Returns { setStatus, showError, clearError, reshow } (reshow: the last refusal,
 * or the status line, again, e.g. in a new language).
 */
export function makeRefusals({ lastChanged }) {
  let lastError = null;
  let status = null; // () => the status line in the page's language (a function was given)

  /** The status line: `text`, or a function giving it (said again in a new language). */
  function setStatus(text, kind) {
    const el = $("status");
    status = typeof text === "function" ? text : null;
    el.textContent = status ? status() : text;
    el.dataset.kind = kind;
  }

  /** The sidebar control a refusal is about: the field the server names, else the last changed. */
  function controlOf(err) {
    const fields = (Array.isArray(err?.detail?.detail) ? err.detail.detail : [])
      .map((e) => (e.loc || []).filter((p) => p !== "body")[0]).filter(Boolean);
    const named = fields.map((f) => FIELD_CONTROL[f] ?? f).find((f) => HIDEABLE.includes(f));
    return named ?? lastChanged();
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

  function reshow() {
    if (lastError) showError(lastError.err, lastError.sections);
    else if (status) $("status").textContent = status();
  }

  return { setStatus, showError, clearError, reshow };
}
