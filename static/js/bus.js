// A tiny event bus between the page glue (main.js) and the panels (static/js/panels/*.js).
// Events: "forward" {data, body}, "perturb" {data, body}, "state" {state}, "language" {lang}.
const listeners = new Map();

/** Call `fn(detail)` on every `event`. */
export function on(event, fn) {
  if (!listeners.has(event)) listeners.set(event, []);
  listeners.get(event).push(fn);
}

/** Tell every listener of `event`; returns the promises of async listeners. */
export function emit(event, detail) {
  return Promise.all((listeners.get(event) || []).map((fn) => fn(detail)));
}
