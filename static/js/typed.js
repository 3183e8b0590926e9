// A number typed into a field that the page cannot use (a seed of -1, 3.5, 1e20, "abc"):
// said under the field, where the eye is, and the field marked aria-invalid; the value
// in use is put back and stays until a good one is typed.
import { t } from "./i18n.js";

/** The message element under `input`, created on first use (role=alert: read out at once). */
function messageOf(input) {
  const id = `${input.id}-typed-error`;
  let p = /** @type {HTMLElement | null} */ (document.getElementById(id));
  if (!p) {
    p = document.createElement("p");
    p.id = id;
    p.className = "field-error typed-error";
    p.setAttribute("role", "alert");
    // under the sidebar's field, or under a panel's row of controls (not inside the row)
    (input.closest(".inline-controls") ?? input).after(p);
    input.setAttribute("aria-describedby", id);
  }
  return p;
}

/**
 * Read a whole number from 0 to `max` typed into `input`. Returns the number, or null after
 * saying under the field why the text was not used and putting `kept` back.
 */
export function typedWhole(input, max, kept) {
  const text = input.value.trim();
  const n = Number(text);
  if (text !== "" && Number.isInteger(n) && n >= 0 && n <= max) {
    input.removeAttribute("aria-invalid");
    document.getElementById(`${input.id}-typed-error`)?.remove();
    return n;
  }
  input.setAttribute("aria-invalid", "true");
  // a number field holds "" for text that is no number at all ("abc"): nothing to quote
  const key = text ? "controls.seed_invalid" : "controls.seed_invalid_empty";
  messageOf(input).textContent = t(key, { value: text, max, kept });
  input.value = String(kept);
  return null;
}
