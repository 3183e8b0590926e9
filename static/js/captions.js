// The flow's shape captions: one line under each plot (its shape in the field's terms and
// what the server sent of it), with the detail in its tooltip. static/js/views.js writes
// them before it draws the plots.
import { t } from "./i18n.js";
import { setAttr } from "./dom.js";

/** A name and a shape: `shapeText("W1", [16, 64])` is "W1 [16 × 64]". */
export function shapeText(name, shape) {
  return `${name} [${shape.join(" × ")}]`;
}

/**
 * The API's display summary for tensor `key` (see `reduction` in /api/forward): null when
 * the tensor was sent whole, else { kept: [column indices], total: full column count,
 * method: "window" (consecutive columns) or "top_rms" (the most active ones) }.
 */
export function summaryOf(data, key) {
  const group = data.reduction?.groups.find((g) => g.tensors.includes(key));
  return group ? { kept: group.kept, total: group.full_shape[1], method: data.reduction.method } : null;
}

/** The flow's tensors' shapes in the field's terms (the sliders' names). */
const SYMBOLIC = {
  input: "T × d_model", pre_activation: "T × d_ff", up: "T × d_ff", hidden: "T × d_ff", output: "T × d_model",
};

/** What the server sent of a summarised tensor, in words: [short (caption), long (tooltip)]. */
function summaryText(summary) {
  const { kept, total } = summary;
  if (summary.method === "top_rms") {
    return [t("display.summary_short", { kept: kept.length, total }), t("display.summary", { kept: kept.length, total })];
  }
  const span = { first: kept[0], last: kept[kept.length - 1], total };
  return [t("display.window_short", span), t("display.window", span)];
}

/** True when window columns `a` and `b` of one tensor draw the same columns (one caption). */
export function sameCaption(a, b) {
  return a.start === b.start && (a.width === b.width || Math.min(a.width, b.width) >= a.total);
}

/**
 * The shape caption, short (one line under a plot), with the detail in its tooltip: what
 * the server sent when it summarised, and which columns are drawn.
 */
export function caption(el, key, data, columns, clip) {
  const summary = summaryOf(data, key);
  // the page's words: the shape in the sliders' names, then its numbers; the API's field
  // name (pre_activation under "Gate") is for the tooltip
  const dims = SYMBOLIC[key];
  const shape = `[${data.shapes[key].join(" × ")}]`;
  const text = dims ? `[${dims}] = ${shape}` : shapeText(key, data.shapes[key]);
  const details = [text, t("caption.api_field", { field: key, shape })];
  const said = summary ? summaryText(summary) : null;
  if (said) details.push(said[1]);
  const total = data.shapes[key][1];
  if (said && summary.method !== "top_rms" && columns && total > columns.width) {
    // the server sent a window wider than the one drawn: the caption names the drawn
    // columns, as the chart's axis and the window control do (the tooltip says what was sent)
    const last = Math.min(total, columns.start + columns.width) - 1;
    said[0] = t("display.window_short", { first: columns.start, last, total });
  }
  if (columns && total > columns.width) {
    details.push(t("window.drawn", { width: columns.width, total }));
  }
  if (clip) details.push(clip.note);
  const parts = [text];
  if (said) parts.push(said[0]);
  if (clip) parts.push(clip.caption);
  // the shape first; the rest in its own span (a small embed shows the shape only)
  const more = document.createElement("span");
  more.className = "caption-more";
  more.append(...unbroken(parts.slice(1).map((p) => ` · ${p}`).join("")));
  const cut = dims ? text.indexOf(" = ") + 2 : text.indexOf(" [");
  const symbolic = () => {
    const span = nobr(text.slice(0, cut));
    span.classList.add("caption-symbolic"); // a small embed shows the numbers only
    return span;
  };
  // the same caption as drawn (a value step): left as it is, not laid out again
  const shown = JSON.stringify([text, cut, parts]);
  if (el.ffnShown !== shown) {
    el.ffnShown = shown;
    el.replaceChildren(...(cut < 0 ? unbroken(text) : [symbolic(), " ", nobr(text.slice(cut + 1))]),
      ...(parts.length > 1 ? [more] : []));
  }
  // the tensor's names that the names panel adds to the tooltip stay (it writes them again
  // for every answer, only when they changed)
  const names = el.title.split("\n\n").slice(1);
  setAttr(el, "title", [details.join("\n"), ...names].join("\n\n"));
}

/** `text` in a span that never wraps (app.css .nobr). */
function nobr(text) {
  const span = document.createElement("span");
  span.className = "nobr";
  span.textContent = text;
  return span;
}

/**
 * `text` as nodes in which a range of numbers ("0–1023", "0 – 1,023") never breaks: a line
 * may end after an en dash, which would leave "0–" above "1023".
 */
function unbroken(text) {
  // split() with a group: the ranges are the odd pieces
  return text.split(/(\d[\d,.]*\s?–\s?\d[\d,.]*)/u)
    .map((piece, i) => (i % 2 ? nobr(piece) : piece)).filter((piece) => piece !== "");
}
