// The predict-then-reveal card: a question's prompt and choices, the class's counts (the
// lecturer's live tally, everyone's after the reveal) and the FFN's answer, in the screen's
// language. Every text is a catalog key with parameters sent by the server.
import { currentLanguage, t } from "../i18n.js";

const $ = (id) => document.getElementById(id);

/** Parameters as shown: numbers with digit grouping, booleans as words. */
function shown(params = {}) {
  const out = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === "number") out[k] = v.toLocaleString(currentLanguage());
    else if (typeof v === "boolean") out[k] = t(v ? "session.yes" : "session.no");
    else out[k] = v;
  }
  return out;
}

/**
 * Draw `question` with `counts` (choice id -> n, or null to hide them), `mine` (this
 * device's choice), `reveal` (the reveal event's data, or null); `onPick(choiceId)` when a
 * choice is pressed (null: not pressable).
 */
export function drawCard({ question, counts = null, mine = null, reveal = null, onPick = null }) {
  const card = $("session-question");
  if (!question) {
    card.hidden = true;
    card.dataset.questionId = "";
    return;
  }
  card.hidden = false;
  card.dataset.questionId = question.id;
  card.dataset.kind = question.kind;
  if (reveal) card.dataset.revealed = "1";
  else delete card.dataset.revealed;
  $("session-prompt").textContent = t(question.prompt, shown(question.params));
  const box = $("session-choices");
  const total = counts ? Object.values(counts).reduce((a, b) => a + b, 0) : 0;
  const correct = new Set(reveal?.answer?.correct ?? []);
  const slips = reveal?.answer?.params?.slips ?? {};
  const buttons = question.choices.map((choice) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "session-choice";
    button.dataset.choice = choice.id;
    button.setAttribute("aria-pressed", String(mine === choice.id));
    button.disabled = !onPick || Boolean(reveal);
    button.classList.toggle("correct", correct.has(choice.id));
    const label = document.createElement("span");
    label.className = "label";
    let text = t(choice.text, shown(choice.params));
    if (reveal && slips[choice.id] && slips[choice.id] !== "right") text += t("session.slip_note", { slip: t(`session.slip.${slips[choice.id]}`) });
    label.textContent = text;
    button.append(label);
    if (counts) {
      const n = counts[choice.id] ?? 0;
      const bar = document.createElement("span");
      bar.className = "bar";
      const fill = document.createElement("span");
      fill.style.width = `${total ? (100 * n) / total : 0}%`;
      bar.append(fill);
      const count = document.createElement("span");
      count.className = "count";
      count.dataset.count = String(n);
      count.textContent = t("session.answers_count", { n: n.toLocaleString(currentLanguage()) });
      button.append(bar, count);
    }
    if (onPick) button.addEventListener("click", () => onPick(choice.id));
    return button;
  });
  box.replaceChildren(...buttons);
  const answer = $("session-answer");
  if (reveal) {
    answer.hidden = false;
    answer.textContent = t(reveal.answer.text, shown({ ...reveal.answer.params, slips: undefined }));
    $("session-answered").textContent = t(reveal.total === 1 ? "session.revealed_total_one" : "session.revealed_total", { n: reveal.total });
  } else {
    answer.hidden = true;
    answer.textContent = "";
  }
}
