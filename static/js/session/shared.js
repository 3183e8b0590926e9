// What a session carries of the page state: the URL's keys, less each screen's own view
// (language, embed, hidden controls, text size) and own numbers (the link's fragment).
// The server checks the same list (app/api/schemas/sessions.py).
import { formatState, parseState } from "../state.js";

export const LOCAL_KEYS = new Set(["lang", "embed", "hide", "big"]);

/** The shared keys of the schema. */
export function sharedKeys(schema) {
  return Object.entries(schema).filter(([k, spec]) => !spec.fragment && !LOCAL_KEYS.has(k)).map(([k]) => k);
}

/** The lecturer's state to publish: shared keys whose values differ from the defaults. */
export function publishedState(schema, state, overrides = {}) {
  const full = { ...state, ...overrides };
  const out = {};
  for (const k of sharedKeys(schema)) {
    if (JSON.stringify(full[k]) !== JSON.stringify(schema[k].default)) out[k] = full[k];
  }
  return out;
}

/**
 * A received state read as a link would be: written as a query string and parsed by the
 * page's own URL parser (state.js), so a followed state gets the checks and fallbacks of
 * an opened link. Returns { updates (every shared key), invalid }.
 */
export function followedUpdates(schema, received) {
  const full = {};
  for (const k of sharedKeys(schema)) full[k] = k in received ? received[k] : structuredClone(schema[k].default);
  const { state, invalid } = parseState(schema, formatState(schema, full));
  const updates = {};
  for (const k of sharedKeys(schema)) updates[k] = state[k];
  return { updates, invalid };
}
