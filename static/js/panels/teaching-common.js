// Shared plumbing of the teaching panels: one LatestOnly requester per panel, an error
// line, a data-rendered counter for tests, re-rendering on language change, and
// "panel-state" events (e.g. from lesson mode) that set a panel's own controls.
import { LatestOnly } from "../api.js";
import { on } from "../bus.js";
import { t } from "../i18n.js";

/**
 * Wire a panel. spec: {
 *   id: section element id,
 *   url: API endpoint,
 *   event: "forward" | "perturb" (which bus event supplies the base body),
 *   body(base, state): the request body,
 *   render(data, state): draw (may return a promise),
 *   setValues(values): apply lesson/panel state to the panel's own controls (optional)
 * }
 * Returns { refresh } to re-request after a panel control changed.
 */
export function panel(spec) {
  const requester = new LatestOnly();
  const section = document.getElementById(spec.id);
  const error = section.querySelector(".panel-error");
  let base = null;
  let state = null;
  let last = null;
  let rendered = 0;

  async function refresh() {
    if (!base) return;
    try {
      const answer = await requester.post(spec.url, spec.body(base, state));
      if (answer.stale) return;
      last = answer.data;
      if (error) error.textContent = "";
      await spec.render(last, state);
      rendered += 1;
      section.dataset.rendered = String(rendered);
    } catch (err) {
      if (error) error.textContent = t("teaching.error", { message: err.message });
      section.dataset.error = err.message;
    }
  }

  on(spec.event, ({ body, state: s }) => {
    if (body.model) {
      // The pretrained layer has no seeded attention/variants to compare: say so plainly.
      base = null;
      section.dataset.unavailable = "pretrained";
      if (error) error.textContent = t("teaching.pretrained_unavailable");
      return;
    }
    delete section.dataset.unavailable;
    base = body;
    state = s;
    refresh(); // not awaited: the core's status line does not wait for the teaching panels
  });
  on("language", () => {
    if (last) spec.render(last, state);
  });
  on("redraw", () => {
    if (last) spec.render(last, state); // a moved window, new text or window size
  });
  on("panel-state", ({ id, values }) => {
    if (id === spec.id && spec.setValues) {
      spec.setValues(values);
      refresh();
    }
  });
  return { refresh };
}

/** Set text and a machine-readable data-value on an element. */
export function readout(el, text, value) {
  el.textContent = text;
  if (value !== undefined) el.dataset.value = String(value);
}

/** The positions 0..n-1 as category labels. */
export function positions(n) {
  return Array.from({ length: n }, (_, i) => String(i));
}
