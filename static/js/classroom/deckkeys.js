// Slides and clickers: in an embed (?embed=1 inside a frame), the keys that move a slide
// deck belong to the deck, also after a touch or click inside the embed has put the focus
// here. They are sent to the parent frame as reveal.js postMessage commands (a JSON string
// {"method": "next", "args": []}, reveal.js's `postMessage` config, on by default), with
// `source` and `key` for other hosts (docs/guides/embedding.md). Keys a focused control
// needs stay with it: arrows move a focused slider, a menu or a radio group; a text field
// keeps Space and the arrows. PageDown and PageUp always go to the deck.

/** Key -> the reveal.js API method it calls (reveal.js's own keyboard map). */
export const DECK_KEYS = {
  PageDown: "next",
  PageUp: "prev",
  " ": "next",
  ArrowRight: "right",
  ArrowLeft: "left",
  ArrowUp: "up",
  ArrowDown: "down",
};
const ARROWS = new Set(["ArrowRight", "ArrowLeft", "ArrowUp", "ArrowDown"]);
const TEXT_TYPES = new Set(["text", "number", "search", "email", "url", "tel", "password"]);

/** A field where Space and the arrows type or move the caret. */
function typing(el) {
  if (!el) return false;
  if (el.tagName === "TEXTAREA" || el.isContentEditable) return true;
  return el.tagName === "INPUT" && TEXT_TYPES.has(el.type);
}

/** A control that the arrow keys move: a slider, a menu, a radio group. */
function arrowControl(el) {
  if (!el) return false;
  if (el.tagName === "SELECT") return true;
  return el.tagName === "INPUT" && (el.type === "range" || el.type === "radio");
}

/**
 * The reveal.js command for keydown `e`, or null when the key stays in the embed: another
 * key, a modifier held (Shift only with Space: the deck's previous step), an input method
 * composing, or a key the focused control needs.
 */
export function deckCommand(e, focused) {
  const method = DECK_KEYS[e.key];
  if (!method || e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return null;
  if (e.shiftKey && e.key !== " ") return null;
  if (e.key === " " && typing(focused)) return null;
  if (ARROWS.has(e.key) && (typing(focused) || arrowControl(focused))) return null;
  return { method: e.key === " " && e.shiftKey ? "prev" : method, args: [], source: "ffn-lab", key: e.key };
}

/**
 * Forward the deck's keys to the parent frame while the page is an embed inside a frame
 * (`app.state.embed`). Listens on the window in the capture phase: the embed's own lesson
 * keys and a focused slider never see a key that went to the deck (a focused slider would
 * otherwise jump a page on PageDown).
 */
export function initDeckKeys(app) {
  if (window.parent === window) return; // not in a frame: the page keeps its keys
  window.addEventListener("keydown", (e) => {
    if (!app.state.embed) return;
    const command = deckCommand(e, document.activeElement);
    if (!command) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    // The deck's origin is not known here (any school's slides may embed the page); the
    // message names a key, nothing private.
    window.parent.postMessage(JSON.stringify(command), "*");
  }, { capture: true });
}
