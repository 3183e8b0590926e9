// Page modes set from the state: classes on <body> (embed, lesson, big), controls hidden by
// `hide=`, which panel is open, and the notice that lists URL values that were refused.
/* global Plotly */
import { emit, on } from "../bus.js";
import { setFontScale } from "../charts.js";
import { sentences, t } from "../i18n.js";
import { setHidden } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
// Charts' fonts in "larger text": on top of the page's own 130 % (app.css), about 1.5 x.
const BIG_FONT_SCALE = 1.15;
const EMBED_FONT_SCALE = 0.85;

function sections() {
  return [...document.querySelectorAll("main > section")];
}

/** Redraw visible plots at their container's size (after a panel appears or the layout changes). */
export function resizePlots() {
  for (const el of document.querySelectorAll(".js-plotly-plot")) {
    if (el.offsetParent !== null) Plotly.Plots.resize(el);
  }
}

/** Draw every chart again at its container's new size (tick density and titles depend on it). */
function relayout() {
  resizePlots();
  emit("redraw", { reason: "layout" });
}

function noticeText(invalid, conflicts) {
  const join = (items) => items.map(({ name, raw }) => `${name}=${raw}`).join(", ");
  const parts = [];
  if (invalid.length) parts.push(t("notice.invalid", { list: join(invalid) }));
  if (conflicts) parts.push(t("notice.conflict", { preset: conflicts.preset, list: join(conflicts.list) }));
  return sentences(...parts);
}

/**
 * Set up the notice for refused URL values and return { apply(state) } that puts the page
 * into the state's mode. A new font scale or window size emits "redraw" (charts drawn again).
 */
export function initLayout(app, invalid, conflicts = null) {
  const notice = $("notice");
  if (invalid.length || conflicts) {
    notice.hidden = false;
    notice.dataset.invalid = [...invalid, ...(conflicts?.list ?? [])].map((e) => e.name).join(",");
    $("notice-text").textContent = noticeText(invalid, conflicts);
    on("language", () => { $("notice-text").textContent = noticeText(invalid, conflicts); });
  }
  $("notice-close").addEventListener("click", () => { notice.hidden = true; });

  let previous = "";
  let previousPanel = "";
  function apply(state) {
    const body = document.body;
    body.classList.toggle("embed", state.embed);
    body.classList.toggle("lesson", state.lesson);
    body.classList.toggle("big", state.big);
    // on the root too: "larger text" scales the root font (app.css html.big); a class, not
    // html:has(body.big), since a :has() on the root makes every style recalculation dearer
    document.documentElement.classList.toggle("big", state.big);
    document.documentElement.classList.toggle("embed", state.embed);
    for (const el of document.querySelectorAll("[data-control]")) {
      setHidden(el, state.hide.includes(el.dataset.control));
    }
    const all = sections();
    // Embedded without a panel: the flow (the source panel holds no plot).
    const fallback = all.find((s) => s.id === "flow") ?? all[0];
    const active = state.panel || (state.embed && fallback ? fallback.id : "");
    for (const section of all) {
      // data-absent: a panel that has nothing to show for this input (e.g. the word swap
      // without typed text); it stays hidden whatever the view, without a flicker
      setHidden(section, (state.embed && section.id !== active) || section.hasAttribute("data-absent"));
      section.classList.toggle("open", section.id === state.panel);
    }
    const signature = JSON.stringify([state.embed, state.lesson, state.big, state.hide, active]);
    if (signature !== previous) {
      const scaleChanged = previous && (JSON.parse(previous)[2] !== state.big || JSON.parse(previous)[0] !== state.embed);
      previous = signature;
      // Embedded plots are small (a slide's frame): their text a little smaller too.
      setFontScale((state.big ? BIG_FONT_SCALE : 1) * (state.embed ? EMBED_FONT_SCALE : 1));
      // Re-lay out once the new CSS sizes apply: fonts, margins and tick density change.
      requestAnimationFrame(() => (scaleChanged ? relayout() : resizePlots()));
    }
    if (state.panel && state.panel !== previousPanel && !state.embed && !state.lesson) {
      $(state.panel)?.scrollIntoView({ block: "start" });
    }
    previousPanel = state.panel;
  }
  // A window resize needs nothing here: charts.js redraws every plot whose container
  // changed size (ResizeObserver), with the tick density of its new size.
  return { apply };
}
