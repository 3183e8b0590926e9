// The presenter: walks through STEPS (lesson/steps.js), setting the controls, highlighting
// what to look at and showing one sentence. Keys: ←/→ (and PageUp/PageDown of a clicker)
// step, `f` larger fonts for the back row, Esc leaves. The step lives in the URL (`step=N`).
// A step's `panelState` goes out as the bus event "panel-state" when the step is shown.
import { emit, on } from "../bus.js";
import { t } from "../i18n.js";
import { LESSON_BASE } from "./steps.js";

const $ = (id) => document.getElementById(id);
const HIGHLIGHT = "lesson-highlight";
const TYPING = new Set(["INPUT", "SELECT", "TEXTAREA"]);

/** Wire the lesson card and keys; returns { startState() } for a lesson link being opened. */
export function initLesson(app) {
  const steps = app.steps;
  const card = $("lesson");
  let shownStep = 0;

  /** The step's settings; its panel is the first of its alternatives that the page has. */
  function stepState(n) {
    const step = steps[n - 1];
    const panels = app.schema.panel.values;
    const panel = (step.panel || []).find((p) => panels.includes(p)) ?? "";
    return { ...LESSON_BASE, ...step.state, panel };
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
  }

  function render() {
    const state = app.state;
    document.body.dataset.lessonStep = state.lesson ? String(state.step) : "";
    if (!state.lesson) {
      card.hidden = true;
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
      clearHighlights();
      const targets = targetsOf(step);
      for (const el of targets) el.classList.add(HIGHLIGHT);
      // The card covers the bottom of the screen: bring what to look at to the top.
      targets.find((el) => el.offsetParent !== null)?.scrollIntoView({ block: "start" });
      // A teaching panel's own controls (e.g. the block's post-norm), set by the step.
      if (step.panelState) emit("panel-state", step.panelState);
    }
  }

  function go(n) {
    const step = Math.min(Math.max(n, 1), steps.length);
    return app.change({ ...stepState(step), lesson: true, step });
  }

  function exit() {
    return app.change({ lesson: false, step: 1, panel: "" }).then(() => $("lesson-start").focus());
  }

  function next() {
    return app.state.step === steps.length ? exit() : go(app.state.step + 1);
  }

  $("lesson-start").addEventListener("click", () => go(1).then(() => $("lesson-next").focus()));
  $("lesson-prev").addEventListener("click", () => go(app.state.step - 1));
  $("lesson-next").addEventListener("click", next);
  $("lesson-exit").addEventListener("click", exit);
  $("lesson-big").addEventListener("click", () => app.change({ big: !app.state.big }));

  document.addEventListener("keydown", (e) => {
    if (!app.state.lesson || e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    if (document.querySelector("dialog[open]")) return;
    if (TYPING.has(e.target.tagName)) return; // sliders and selects keep their arrow keys
    if (e.key === "ArrowRight" || e.key === "PageDown") next();
    else if (e.key === "ArrowLeft" || e.key === "PageUp") go(app.state.step - 1);
    else if (e.key === "f" || e.key === "F") app.change({ big: !app.state.big });
    else if (e.key === "Escape") exit();
    else return;
    e.preventDefault();
  });
  on("state", render);
  on("language", render);

  return {
    startState: () => (app.state.lesson ? stepState(app.state.step) : null),
  };
}
