// Errors shown in the page, from the catalogs: a sentence per known validation error type,
// followed by the server's own detail (which names the field, the value and the limit).
import { t } from "./i18n.js";

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

/** The server's detail without the names of its settings (students never see max_params). */
export function plain(text) {
  return String(text ?? "").replace(/\s*\(setting[s]? [\w, ]+\)/g, "");
}

function field(loc) {
  return (loc || []).filter((p) => p !== "body").join(".") || t("errors.whole_request");
}

/** One line per problem for an ApiError (or a network failure), in the page's language. */
export function describeError(err) {
  if (!err || !err.status) return t("status.network");
  const items = err.detail?.detail;
  if (err.status === 422 && Array.isArray(items)) {
    const lines = items.map((e) => t("errors.item", {
      field: field(e.loc),
      sentence: t(TYPE_KEYS[e.type] ?? "errors.type.other"),
      detail: plain(e.msg),
    }));
    return `${t("errors.refused")} ${lines.join(" ")}`;
  }
  return t("errors.status", { status: err.status, detail: plain(err.message) });
}
