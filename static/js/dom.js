// Writes that touch the page only when the value differs. Controls, captions and buttons are
// synced on every slider input and every answer; an unchanged textContent still replaces the
// text node, and an unchanged attribute still invalidates the element's style, so the
// browser laid out and styled them again in each frame of a drag.

/** Set `el`'s text to `text` when it differs. */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Set attribute `name` of `el` to `value` when it differs. */
export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/** Show or hide `el` (the `hidden` attribute) when that changes. */
export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** Enable or disable a control when that changes. */
export function setDisabled(el, disabled) {
  if (el.disabled !== disabled) el.disabled = disabled;
}
