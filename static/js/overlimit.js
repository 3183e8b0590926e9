// "Beyond what this panel computes": the sizes the server refuses are known from the boot
// limits, so a panel says so in one short notice (and hides what cannot be drawn) instead of
// sending a request that must fail. A 422 the page did not foresee goes through the same
// notice when its detail is one of these refusals.
import { ffnParams } from "./ladders.js";
import { count } from "./format.js";
import { t } from "./i18n.js";

/** Parameters of one self-attention sub-layer: 4 d_model² (+ 4 d_model with biases). */
function attentionParams(dModel, bias) {
  return 4 * dModel * dModel + (bias ? 4 * dModel : 0);
}

/**
 * The stack's parameters (distinct layers x (FFN + attention)), as app/api/schemas/stack.py
 * counts them. body: the /api/stack request body.
 */
export function stackParams(body, gated) {
  const perLayer = ffnParams(body.d_model, body.d_ff, gated, body.bias !== false)
    + (body.attention ? attentionParams(body.d_model, body.bias !== false) : 0);
  return (body.share_weights ? 1 : body.n_layers) * perLayer;
}

const number = (text) => Number(String(text).replace(/,/g, ""));

/** The stack notice, or null when within the limit. */
export function stackNotice(nLayers, params, limit) {
  if (!(params > limit)) return null;
  return t("over.stack", { n: nLayers, params: count(params), limit: count(limit) });
}

/** The low-rank (SVD) notice, or null when within the limit. */
export function svdNotice(entries, limit) {
  if (!(entries > limit)) return null;
  return t("over.svd", { entries: count(entries), limit: count(limit) });
}

function messages(err) {
  const items = err?.status === 422 ? err.detail?.detail : null;
  return Array.isArray(items) ? items.map((e) => String(e.msg ?? "")) : [];
}

/** The notice for a 422 that is the stack's parameter refusal, else null. */
export function stackNoticeFrom(err) {
  for (const msg of messages(err)) {
    const m = /^this stack \(n_layers = (\d+),.*\) has ([\d,]+) parameters; this server runs at most ([\d,]+)/.exec(msg);
    if (m) return stackNotice(Number(m[1]), number(m[2]), number(m[3]));
  }
  return null;
}

/** The notice for a 422 that is the low-rank view's SVD-size refusal, else null. */
export function svdNoticeFrom(err) {
  for (const msg of messages(err)) {
    const m = /W1 has ([\d,]+) entries; the low-rank view .* at most ([\d,]+)/.exec(msg);
    if (m) return svdNotice(number(m[1]), number(m[2]));
  }
  return null;
}

/**
 * Show (message) or clear (null) a section's over-limit notice: the section's
 * `.panel-notice` gets the text and `data-over` hides its `.over-hide` parts (CSS).
 */
export function showOver(section, message) {
  const notice = section.querySelector(".panel-notice");
  if (!message) {
    delete section.dataset.over;
    if (notice) notice.textContent = "";
    return;
  }
  section.dataset.over = "1";
  if (notice) notice.textContent = message;
}
