// Where the FFN's input comes from: random tokens (the core), the user's own numbers, or a
// typed text run through the pretrained model. A source panel registers a function that
// rewrites the request body; main.js's requestBody() passes every body through applySource.
const sources = new Map();

/** `fn(body, state)` returns the body for source `name` (or the body unchanged). */
export function registerSource(name, fn) {
  sources.set(name, fn);
}

/** The body for the current `state.source`. */
export function applySource(body, state) {
  const fn = sources.get(state.source);
  return fn ? fn(body, state) : body;
}

/** Unique y labels "0 [CLS]", "1 the", ... for token rows (null without tokens). */
export function tokenLabels(tokens) {
  return tokens ? tokens.map((tok, i) => `${i} ${tok}`) : undefined;
}
