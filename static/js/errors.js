// Errors shown in the page, from the catalogs: a sentence per known validation error type,
// followed by the server's own detail (which names the field, the value and the limit).
import { sentences, t } from "./i18n.js";

/** Pydantic error types the catalogs translate; others read "errors.type.other". */
const TYPE_KEYS = {
  value_error: "errors.type.value_error",
  greater_than_equal: "errors.type.greater_than_equal",
  greater_than: "errors.type.greater_than",
  less_than_equal: "errors.type.less_than_equal",
  less_than: "errors.type.less_than",
  int_parsing: "errors.type.int_parsing",
  float_parsing: "errors.type.float_parsing",
  missing: "errors.type.missing",
  extra_forbidden: "errors.type.extra_forbidden",
  literal_error: "errors.type.literal_error",
};

/**
 * The server's detail in the page's language where the catalogs know it (the refusals a
 * student meets: too many parameters, a value over its limit), and never with the names of
 * the server's settings (max_params, ...).
 */
/** @type {Array<[RegExp, (m: RegExpExecArray) => string]>} */
const KNOWN_DETAILS = [
  [/^d_model=(\d+), d_ff=(\d+) \((\w+)\) needs ([\d,]+) parameters; the limit is ([\d,]+)/,
    (m) => t("errors.detail.params", { d_model: m[1], d_ff: m[2], activation: m[3], params: m[4], limit: m[5] })],
  [/^d_model=(\d+), d_ff=(\d+) needs ([\d,]+) parameters for the gated variants; the limit is ([\d,]+)/,
    (m) => t("errors.detail.params_gated", { d_model: m[1], d_ff: m[2], params: m[3], limit: m[4] })],
  [/^this stack \(n_layers = (\d+), d_model = (\d+), d_ff = (\d+)\) has ([\d,]+) parameters; this server runs at most ([\d,]+)/,
    (m) => t("errors.detail.stack_params", { n_layers: m[1], d_model: m[2], d_ff: m[3], params: m[4], limit: m[5] })],
  [/^d_model = (\d+), d_ff = (\d+): W1 has ([\d,]+) entries; the low-rank view .* at most ([\d,]+)/,
    (m) => t("errors.detail.svd_entries", { d_model: m[1], d_ff: m[2], entries: m[3], limit: m[4] })],
  [/^(\w+) = (\S+) is over the limit of (\S+)/,
    (m) => t("errors.detail.over", { field: m[1], value: m[2], limit: m[3] })],
];

export function plain(text) {
  const detail = String(text ?? "").replace(/\s*\(setting[s]? [\w, ]+\)/g, "");
  for (const [pattern, say] of KNOWN_DETAILS) {
    const m = pattern.exec(detail);
    if (m) return say(m);
  }
  return detail;
}

/** A number as the server prints it (201,326,592): the same digits in every language. */
function shown(value) {
  return typeof value === "number" && Math.abs(value) >= 100000 ? value.toLocaleString("en-US") : value;
}

/**
 * The refusal in the page's language: the server's structured error (`code`, `params`:
 * field, value, allowed/limit) read through the catalogs (errors.code.<code>); a refusal
 * without a code, or one this page does not know, falls back to the known texts above.
 */
function detailOf(item) {
  const key = `errors.code.${item.code}`;
  if (item.code && t(key) !== key) {
    const params = Object.fromEntries(Object.entries(item.params ?? {}).map(([k, v]) => [k, shown(v)]));
    return t(key, params);
  }
  return plain(item.msg);
}

function field(loc) {
  return (loc || []).filter((p) => p !== "body").join(".");
}

/** One line per problem for an ApiError (or a network failure), in the page's language. */
export function describeError(err) {
  if (!err || !err.status) return t("status.network");
  const items = err.detail?.detail;
  if (err.status === 422 && Array.isArray(items)) {
    // A check of the whole body (no field, e.g. a model validator) reads without "request:".
    const lines = items.map((e) => {
      const sentence = t(TYPE_KEYS[e.type] ?? "errors.type.other");
      // without a field name first, the line is a sentence of its own: "This combination…"
      const whole = !field(e.loc);
      return t(whole ? "errors.item_whole" : "errors.item", {
        field: field(e.loc),
        sentence: whole ? sentence.charAt(0).toLocaleUpperCase() + sentence.slice(1) : sentence,
        detail: detailOf(e),
      });
    });
    return sentences(t("errors.refused"), ...lines);
  }
  return t("errors.status", { status: err.status, detail: plain(err.message) });
}

/** The refusal's details alone (no lead sentence), in the page's language: for a panel's
 * own error line ("Could not read the file: ..."). */
export function refusalDetails(err) {
  const items = err?.detail?.detail;
  if (err?.status === 422 && Array.isArray(items)) return items.map(detailOf).join("; ");
  return err?.status ? describeError(err) : String(err?.message || err);
}
