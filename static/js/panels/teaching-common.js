// Shared plumbing of the teaching panels: one LatestOnly requester per panel, requested only
// when the panel is seen (static/js/live.js), busy while pending, a refusal shown at the
// panel, a data-rendered counter for tests, re-rendering on language change. A panel's own
// settings (heads, norm, ...) live in the page state (static/js/state.js, so in the URL).
import { LatestOnly } from "../api.js";
import { on } from "../bus.js";
import { describeError } from "../errors.js";
import { t } from "../i18n.js";
import { liveView, setStale, showRefused } from "../live.js";
import { showOver } from "../overlimit.js";

/**
 * Wire a panel. spec: {
 *   id: section element id,
 *   url: API endpoint,
 *   event: "forward" | "perturb" (which request body is the base),
 *   keys: state names the request depends on beyond the base body (e.g. ["norm"]),
 *   body(base, state): the request body,
 *   render(data, state): draw (may return a promise),
 *   sync(state): show the state in the panel's own controls (optional),
 *   over(body): a notice when the body is known to be beyond what the server computes, or
 *     null (optional; then no request is sent and `.over-hide` parts are hidden),
 *   overFrom(err): the same notice for a refusal (422) that says so, or null (optional)
 * }
 * Returns { refresh } to re-request now.
 */
export function panel(spec) {
  const requester = new LatestOnly();
  const section = document.getElementById(spec.id);
  const error = section.querySelector(".panel-error");
  const keys = spec.keys || [];
  let base = null;
  let state = null;
  let last = null;
  let rendered = 0;
  let requestedKeys = "";
  const keyText = (s) => JSON.stringify(keys.map((k) => s[k]));

  async function request() {
    if (!base) return;
    requestedKeys = keyText(state);
    const body = spec.body(base, state);
    const notice = spec.over?.(body) ?? null;
    showOver(section, notice);
    if (notice) {
      last = null; // the last answer is not this configuration's
      showRefused(section, null);
      delete section.dataset.error;
      return;
    }
    try {
      const answer = await requester.post(spec.url, body);
      if (answer.stale) return;
      last = answer.data;
      if (error) error.textContent = "";
      showRefused(section, null);
      delete section.dataset.error;
      await spec.render(last, state);
      rendered += 1;
      section.dataset.rendered = String(rendered);
    } catch (err) {
      section.dataset.error = err.message;
      const over = spec.overFrom?.(err) ?? null;
      if (over) {
        last = null;
        showOver(section, over);
      } else {
        showRefused(section, describeError(err));
      }
    }
  }
  const view = liveView(section, request);

  on("compute", ({ body, pBody, state: s }) => {
    state = s;
    const b = spec.event === "perturb" ? pBody : body;
    if (b.model) {
      // The pretrained layer has no seeded attention/variants to compare: say so plainly.
      base = null;
      requester.abort();
      setStale(section, false);
      section.dataset.unavailable = "pretrained";
      if (error) error.textContent = t("teaching.pretrained_unavailable");
      return;
    }
    delete section.dataset.unavailable;
    if (error) error.textContent = "";
    base = b;
    view.invalidate(); // not awaited: the core's status line does not wait for the panels
  });
  on("state", ({ state: s, computing }) => {
    state = s;
    spec.sync?.(s);
    // A panel setting alone changed: only this panel recomputes (a "compute" follows otherwise).
    if (!computing && base && keyText(s) !== requestedKeys) view.invalidate();
  });
  on("language", () => {
    if (last) spec.render(last, state);
    else if (section.dataset.over) view.invalidate({ now: true }); // the notice, re-translated
  });
  on("redraw", () => {
    if (last) spec.render(last, state); // a moved window, new text or window size
  });
  return { refresh: () => view.invalidate({ now: true }) };
}

/** Set text and a machine-readable data-value on an element. */
export function readout(el, text, value) {
  el.textContent = text;
  if (value !== undefined) el.dataset.value = String(value);
}

/** A table cell (td) showing `text`, with a machine-readable data-value when `value` is given. */
export function cell(text, value) {
  const td = document.createElement("td");
  readout(td, text, value);
  return td;
}

/** The positions 0..n-1 as category labels. */
export function positions(n) {
  return Array.from({ length: n }, (_, i) => String(i));
}
