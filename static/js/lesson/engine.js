// The presenter: walks through STEPS (lesson/steps.js), setting the controls, highlighting
// what to look at and showing one sentence. Keys: ←/→ (and PageUp/PageDown of a clicker)
// step, `f` larger fonts for the back row, Esc leaves. The step lives in the URL (`step=N`).
// The keys work wherever the focus is (a slider, a menu): they are read at the document in
// the capture phase while the lesson runs, and a step change releases the focus. Without
// the lesson, sliders keep their arrow keys. Text fields keep their keys.
import { emit, on } from "../bus.js";
import { t } from "../i18n.js";
import { LESSON_BASE } from "./steps.js";
import { setAttr, setHidden } from "../dom.js";

/** @param {string} id */
const $ = (id) => /** @type {Control} */ (document.getElementById(id));
const HIGHLIGHT = "lesson-highlight";
const RING = "lesson-ring";

/** What draws a highlighted element's ring: a plot's whole frame (its export buttons and,
 * in the flow, its shape caption), so that the ring crosses none of them; else itself. */
function ringOf(el) {
  return el.closest(".stage") ?? el.closest(".plot-wrap") ?? el;
}
/** The lowest a plot is made to fit its panel above the lesson card (CSS px). */
const MIN_PLOT_PX = 140;
/** Inputs where keys type text: they keep every key (but a clicker's PageUp/PageDown). */
const TEXT_TYPES = new Set(["text", "number", "search", "email", "url", "tel", "password"]);

function typing(el) {
  if (!el) return false;
  if (el.tagName === "TEXTAREA" || el.isContentEditable) return true;
  return el.tagName === "INPUT" && TEXT_TYPES.has(el.type);
}

/** Wire the lesson card and keys; returns { startState() } for a lesson link being opened. */
export function initLesson(app) {
  const steps = app.steps;
  const card = $("lesson");
  let shownStep = 0;

  // Every setting a step may change. A step that does not set one gets its default (the
  // low rank of step 15 must not follow the student into step 16's 16-wide layer), and
  // leaving the lesson puts every one back as it was before the lesson started.
  const touched = [...new Set([...Object.keys(LESSON_BASE), ...steps.flatMap((s) => Object.keys(s.state))])]
    .filter((k) => app.schema[k]);
  const defaults = () => Object.fromEntries(touched.map((k) => [k, app.schema[k].default]));
  let before = null; // the settings when the lesson started (none when it opened from a link)

  /** The step's settings; its panel is the first of its alternatives that the page has. */
  function stepState(n) {
    const step = steps[n - 1];
    const panels = app.schema.panel.values;
    const panel = (step.panel || []).find((p) => panels.includes(p)) ?? "";
    return { ...defaults(), ...LESSON_BASE, ...step.state, panel };
  }

  /** Elements to highlight: each entry is a selector or a list of alternatives. */
  function targetsOf(step) {
    return step.highlight.map((entry) => {
      const options = Array.isArray(entry) ? entry : [entry];
      for (const selector of options) {
        const el = document.querySelector(selector);
        if (el) return el;
      }
      return null;
    }).filter(Boolean);
  }

  function clearHighlights() {
    for (const el of document.querySelectorAll(`.${HIGHLIGHT}`)) el.classList.remove(HIGHLIGHT);
    for (const el of document.querySelectorAll(`.${RING}`)) el.classList.remove(RING);
  }

  function render() {
    const state = app.state;
    setAttr(document.body, "data-lesson-step", state.lesson ? String(state.step) : "");
    if (!state.lesson) {
      setHidden(card, true);
      for (const el of shownTargets) unfit(panelOf(el));
      shownTargets = [];
      clearHighlights();
      shownStep = 0;
      return;
    }
    const step = steps[state.step - 1];
    card.hidden = false;
    card.dataset.step = step.id;
    $("lesson-counter").textContent = t("lesson.counter", { n: state.step, total: steps.length });
    $("lesson-title").textContent = t(step.title);
    $("lesson-text").textContent = t(step.text);
    $("lesson-prev").disabled = state.step === 1;
    $("lesson-next").textContent = state.step === steps.length ? t("lesson.finish") : t("lesson.next");
    $("lesson-big").setAttribute("aria-pressed", String(state.big));
    if (shownStep !== state.step) {
      shownStep = state.step;
      for (const el of shownTargets) unfit(panelOf(el));
      clearHighlights();
      const targets = targetsOf(step);
      shownTargets = targets;
      for (const el of targets) {
        el.classList.add(HIGHLIGHT);
        ringOf(el).classList.add(RING);
      }
      pinned = true;
      showTarget();
      for (const el of targets) showInSidebar(el);
      // the step's panel runs what the sentence describes (e.g. the training, live)
      if (step.start && document.getElementById(step.start)) emit("panel-state", { id: step.start, values: step.startValues ?? { start: true } });
    }
  }

  // Views above the target may grow or shrink when their answers arrive (and the plots
  // re-lay out for larger text): keep the target in place until the user scrolls.
  let pinned = false;
  let shownTargets = [];
  const unpin = () => { pinned = false; };
  for (const type of ["wheel", "touchmove", "mousedown"]) window.addEventListener(type, unpin, { passive: true });
  if (typeof ResizeObserver === "function") {
    new ResizeObserver(() => { if (pinned && app.state.lesson) showTarget(); }).observe(document.querySelector("main") ?? document.body);
  }

  /**
   * A highlighted control of the sidebar (e.g. Mode) is scrolled to the top of the sidebar,
   * which scrolls on its own when taller than the window, when it is not whole in sight
   * above the lesson card.
   */
  function showInSidebar(el) {
    const bar = el.closest(".controls");
    if (!bar || bar.scrollHeight <= bar.clientHeight) return;
    const r = el.getBoundingClientRect();
    const box = bar.getBoundingClientRect();
    const floor = Math.min(box.bottom, card.hidden ? Infinity : card.getBoundingClientRect().top);
    if (r.top < box.top || r.bottom > floor) bar.scrollTop += r.top - box.top - 8;
  }

  /** The panel (a <section> of the page) that holds `el`. */
  function panelOf(el) {
    return el.closest("main > section") ?? el;
  }

  /** Give the plots of `panel` back their own height (CSS). */
  function unfit(panel) {
    for (const plot of panel.querySelectorAll(".plot[data-lesson-fit]")) {
      plot.style.removeProperty("height");
      delete plot.dataset.lessonFit;
    }
  }

  /**
   * Make `panel` at most `room` px tall by lowering its plots (each row of plots by an equal
   * share, never below MIN_PLOT_PX); the plots re-lay out at their new size (charts.js).
   * Returns true when it fits.
   */
  function fitPanel(panel, room) {
    unfit(panel);
    const excess = panel.getBoundingClientRect().height - room;
    if (excess <= 0) return true;
    const plots = [...panel.querySelectorAll(".plot")].filter((p) => p.offsetParent !== null && p.clientHeight > 0);
    // rows of plots: a plot starts a new row below the middle of the row before (a ringed
    // plot's padding puts its top a few px lower than its row's others)
    let rows = 0;
    let rowMiddle = -Infinity;
    for (const box of plots.map((p) => p.getBoundingClientRect()).sort((a, b) => a.top - b.top)) {
      if (box.top < rowMiddle) continue;
      rows += 1;
      rowMiddle = box.top + box.height / 2;
    }
    if (!rows) return false;
    const cut = Math.ceil(excess / rows);
    for (const plot of plots) {
      const h = plot.getBoundingClientRect().height;
      plot.style.height = `${Math.max(MIN_PLOT_PX, Math.floor(h - cut))}px`;
      plot.dataset.lessonFit = "1";
    }
    if (panel.getBoundingClientRect().height <= room) return true;
    unfit(panel); // lower plots would not do: they keep their height
    return false;
  }

  /**
   * The card covers the bottom of the screen: bring the highlighted panel to the top, whole
   * and above the card (its plots lowered when it is too tall, e.g. with larger text). A
   * panel that cannot fit shows the step's first target from its top.
   */
  function showTarget() {
    const el = shownTargets.find((e) => e.offsetParent !== null); // the step's first target
    if (!el) return;
    const fixedCard = !card.hidden && getComputedStyle(card).position === "fixed";
    const cardTop = fixedCard ? card.getBoundingClientRect().top : window.innerHeight;
    const panel = panelOf(el);
    const margin = 8;
    if (fixedCard && fitPanel(panel, cardTop - 2 * margin)) {
      window.scrollBy(0, panel.getBoundingClientRect().top - margin);
      return;
    }
    // too tall even with lower plots: the first target from its top (a plot with its
    // figure: the export buttons above it and the caption below stay in view), or from
    // the heading of its part of the panel when both fit above the card (the capacity
    // sweep's heading and button, at lesson step 20)
    const anchor = el.closest(".stage, .plot-wrap") ?? el;
    const heading = [...panel.querySelectorAll("h3")]
      .filter((h) => h.compareDocumentPosition(anchor) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    const from = heading && anchor.getBoundingClientRect().bottom - heading.getBoundingClientRect().top
      <= cardTop - 2 * margin ? heading : anchor;
    window.scrollBy(0, from.getBoundingClientRect().top - margin);
  }

  /** Larger text re-lays out every plot; the highlighted view stays in view above the card. */
  async function toggleBig() {
    pinned = true;
    await app.change({ big: !app.state.big });
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    showTarget();
    document.body.dataset.lessonBig = String(app.state.big);
  }

  function go(n) {
    const step = Math.min(Math.max(n, 1), steps.length);
    // A slider or menu that kept the focus would take the next arrow key: release it.
    const focused = /** @type {HTMLElement | null} */ (document.activeElement);
    if (focused && focused !== document.body && card.contains(focused) === false) focused.blur();
    if (!app.state.lesson) before = Object.fromEntries(touched.map((k) => [k, app.state[k]]));
    return app.change({ ...stepState(step), lesson: true, step });
  }

  /** Leave: the page as it was before the lesson (or as it opens, after a lesson link). */
  function exit() {
    const back = before ?? defaults();
    before = null;
    return app.change({ ...back, lesson: false, step: 1 }).then(() => $("lesson-start").focus());
  }

  function next() {
    return app.state.step === steps.length ? exit() : go(app.state.step + 1);
  }

  $("lesson-start").addEventListener("click", () => go(1).then(() => $("lesson-next").focus()));
  $("lesson-prev").addEventListener("click", () => go(app.state.step - 1));
  $("lesson-next").addEventListener("click", next);
  $("lesson-exit").addEventListener("click", exit);
  $("lesson-big").addEventListener("click", toggleBig);

  document.addEventListener("keydown", (e) => {
    if (!app.state.lesson || e.altKey || e.ctrlKey || e.metaKey) return;
    if (document.querySelector("dialog[open]")) return;
    const clicker = e.key === "PageDown" || e.key === "PageUp";
    if (typing(e.target) && !clicker) return; // a text field keeps its keys
    if (e.key === "ArrowRight" || e.key === "PageDown") next();
    else if (e.key === "ArrowLeft" || e.key === "PageUp") go(app.state.step - 1);
    else if (e.key === "f" || e.key === "F") toggleBig();
    else if (e.key === "Escape") exit();
    else return;
    // Taken before the slider or menu sees it (capture phase): it must not move as well.
    e.preventDefault();
    e.stopPropagation();
  }, { capture: true });
  on("state", render);
  on("language", render);

  return {
    startState: () => (app.state.lesson ? stepState(app.state.step) : null),
  };
}
