// Windows of consecutive real columns for heatmaps wider than a plot can show:
// no pooling, every drawn cell is one entry of the tensor. One window over the
// d_ff units (pre-activation, up, hidden, dropout) and one over the d_model features
// (input, output, block, perturbation); the flow's range controls move them, the axes say
// which columns are drawn ("units 0–255 of 2048"). When the server sends only a window of
// a big tensor (reduction.method "window", CONTRACT.md), moving past it asks for another
// (unit_start / feature_start in the request).
import { emit, on } from "./bus.js";
import { WINDOW_WIDTH } from "./charts/common.js";
import { t } from "./i18n.js";
import { setAttr, setHidden, setText } from "./dom.js";

/** Columns drawn at once: about what a plot of a few hundred px can show one by one
 * (static/js/charts/rules.json, shared with the Python figures). */
export const WIDTH = WINDOW_WIDTH;
/**
 * On a phone held upright (a page under 600 px wide, not an embed): a plot's cells are
 * 120-230 px across (less beside token names at 360 px), so 96 columns, each cell still at
 * least a pixel wide (no column of the window is lost between pixels).
 */
export const PHONE_WIDTH = { units: 96, features: 96 };
const PHONE_QUERY = "(max-width: 600px)";

function phone() {
  return typeof window !== "undefined" && !document.documentElement.classList.contains("embed")
    && Boolean(window.matchMedia?.(PHONE_QUERY).matches);
}

/** The most columns the narrowest flow plot of each window shows one per pixel or more
 * (`fitWindows`): a window never has more, so that none of its columns is lost between
 * pixels (a 1280x720 projector: 256 units in a 140 px plot would leave ~116 unseen). */
const fits = { units: Infinity, features: Infinity };

/** The most columns window `kind` draws at once at this window size. */
function widest(kind) {
  return Math.min(phone() ? PHONE_WIDTH[kind] : WIDTH[kind], fits[kind]);
}

/**
 * The flow's plots of each window fit at most `columns[kind]` columns one per pixel
 * (static/js/charts/room.js `columnsThatFit`, read before the flow is drawn): the windows
 * and their controls follow. Returns true when a window's width changed.
 */
export function fitWindows(columns) {
  let changed = false;
  for (const kind of /** @type {const} */ (["units", "features"])) {
    const fit = columns[kind] ?? Infinity;
    if (fits[kind] === fit) continue;
    fits[kind] = fit;
    changed = true;
    syncControl(kind);
  }
  return changed;
}
const LABELS = { units: "window.units", features: "window.features" };
const KEYS = { units: ["pre_activation", "up", "hidden"], features: ["input", "output"] };
const starts = { units: 0, features: 0 };
const totals = { units: 0, features: 0 };
let sent = null; // { units: [start, stop], features: [start, stop] } when the server windowed
let serverWindows = false;

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));

/**
 * Columns drawn at once in window `kind`: WIDTH, or fewer when the server sends fewer per
 * window (a long T: its budget of numbers is shared by more rows). The range control then
 * names and steps through what is drawn, so "later" shows the very next columns.
 */
function widthOf(kind) {
  const range = serverWindows ? sent?.[kind] : null;
  return range ? Math.max(1, Math.min(widest(kind), range[1] - range[0])) : widest(kind);
}

/** The display-summary group of tensor `key` in an answer, or null (sent whole). */
function groupOf(data, key) {
  return data?.reduction?.groups?.find((g) => g.tensors.includes(key)) ?? null;
}

/** A small embed (a slide's frame under 800 px, as in app.css): axis titles kept short. */
function compactFrame() {
  return typeof document !== "undefined" && document.body.classList.contains("embed")
    && window.matchMedia("(max-width: 800px)").matches;
}

/**
 * Heatmap `columns` options for tensor `key` of `data` in window `kind` ("units" or
 * "features"): { start, width, total, index, label }. `index` lists the real column of
 * each sent column when the server sent only some.
 */
export function columnsFor(kind, data, key) {
  const group = groupOf(data, key);
  const rows = data[key];
  const total = group ? group.full_shape[1] : rows?.[0]?.length ?? 0;
  return {
    start: starts[kind],
    width: widthOf(kind),
    total,
    index: group ? group.kept : undefined,
    // a small embed (a slide's frame) names the window only: the total is in the caption
    label: (first, last, n) => t(compactFrame() ? `${LABELS[kind]}_short` : LABELS[kind], { first, last, total: n }),
  };
}

/** Request fields for the server's window (only once the server answers with windows). */
export function windowFields() {
  return serverWindows ? { unit_start: starts.units, feature_start: starts.features } : {};
}

function sentRange(data, kind) {
  const group = KEYS[kind].map((k) => groupOf(data, k)).find(Boolean);
  if (!group) return null;
  if (group.start !== undefined) return [group.start, group.stop];
  return null;
}

function syncControl(kind) {
  const box = document.querySelector(`[data-window="${kind}"]`);
  if (!box) return;
  const width = widthOf(kind);
  const total = totals[kind];
  setHidden(box, total <= width);
  const slider = $(`window-${kind}`);
  const max = Math.max(0, total - width);
  starts[kind] = Math.min(starts[kind], max);
  setAttr(slider, "max", String(max));
  // any start: a window narrowed to fit (a resize) keeps its first column where it was, and
  // the thumb stays on it (a coarser step would move the thumb off the window's start)
  setAttr(slider, "step", "1");
  slider.value = String(starts[kind]);
  const last = Math.min(total, starts[kind] + width) - 1;
  const text = t(LABELS[kind], { first: starts[kind], last, total });
  setText($(`window-${kind}-value`), text);
  setAttr(slider, "aria-valuetext", text);
}

/** Move window `kind` to `start`: redraw, or ask the server when it sent another window. */
export function moveWindow(kind, start) {
  const width = widthOf(kind);
  const max = Math.max(0, totals[kind] - width);
  starts[kind] = Math.max(0, Math.min(Math.round(start), max));
  syncControl(kind);
  const range = sent?.[kind];
  if (serverWindows && range && (starts[kind] < range[0] || starts[kind] + width > range[1])) {
    return emit("change", {}); // recompute: the request carries the new unit_start
  }
  return emit("redraw", { reason: "window" });
}

function bind(kind) {
  const slider = $(`window-${kind}`);
  if (!slider) return;
  slider.addEventListener("input", () => moveWindow(kind, Number(slider.value)));
  for (const button of document.querySelectorAll(`[data-window="${kind}"] button[data-step]`)) {
    button.addEventListener("click", () => moveWindow(kind, starts[kind] + Number(button.dataset.step) * widthOf(kind)));
  }
}

on("forward", ({ data }) => {
  serverWindows = data.reduction?.method === "window";
  sent = { units: sentRange(data, "units"), features: sentRange(data, "features") };
  totals.units = data.config.d_ff;
  totals.features = data.config.d_model;
  syncControl("units");
  syncControl("features");
});
on("language", () => {
  syncControl("units");
  syncControl("features");
});

if (typeof document !== "undefined") {
  bind("units");
  bind("features");
  // turning a phone or resizing across PHONE_QUERY changes how many columns are drawn
  window.matchMedia?.(PHONE_QUERY).addEventListener?.("change", () => {
    syncControl("units");
    syncControl("features");
    emit("redraw", { reason: "window" });
  });
  // a window resized in width changes how many columns fit its plots (the flow fits them
  // again; a plot resized meanwhile draws no more columns than fit, its axis naming them).
  // Height alone does not: a phone's address bar hiding on scroll redraws nothing.
  let resizing = 0;
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (resizing || window.innerWidth === width) return;
    resizing = requestAnimationFrame(() => {
      resizing = 0;
      width = window.innerWidth;
      emit("redraw", { reason: "window" });
    });
  });
}
