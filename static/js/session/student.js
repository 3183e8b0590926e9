// A student's side of a class session (/join/{code}): follow the lecturer's page (each
// state applied as an opened link would be), "Explore on my own" (own changes stay here, a
// banner says so) and "Follow again" (back to the lecturer's current state), answer the
// lecturer's questions and see the FFN's answer beside the class's. A dropped connection
// reconnects (the server sends the current state first); a session that is gone (ended, or
// the server restarted) says so instead of leaving a frozen page.
import { on } from "../bus.js";
import { t } from "../i18n.js";
import { drawCard } from "./card.js";
import { detailOf, deviceId, openEvents, request } from "./net.js";
import { followedUpdates } from "./shared.js";

const $ = (id) => document.getElementById(id);
const RETRY_MS = 3000;

export function initStudent(app, code) {
  const root = $("session");
  let following = true;
  let latest = null; // the lecturer's newest { state, version }
  let appliedVersion = -1;
  let applying = false;
  let question = null;
  let reveal = null;
  let mine = null;
  let source = null;
  let isEnded = false;

  root.hidden = false;
  document.body.dataset.sessionRole = "student";
  $("session-student").hidden = false;
  root.dataset.code = code;

  function status() {
    const el = $("session-status");
    if (isEnded) el.textContent = t("session.ended");
    else if (root.dataset.connection === "reconnecting") el.textContent = t("session.reconnecting");
    else el.textContent = t(following ? "session.following" : "session.left", { code });
    root.dataset.following = following ? "1" : "0";
    $("session-explore").hidden = !following || isEnded;
    $("session-follow").hidden = following || isEnded;
  }

  async function apply() {
    if (!latest || !following || latest.version === appliedVersion) return;
    const target = latest;
    const { updates } = followedUpdates(app.schema, target.state);
    applying = true;
    try {
      // A new preset first (it sets the shape), then every value as the lecturer has it.
      if (updates.preset !== app.state.preset) await app.change({ preset: updates.preset });
      const { preset, ...rest } = updates;
      await app.change(rest);
    } finally {
      applying = false;
    }
    appliedVersion = target.version;
    root.dataset.version = String(target.version);
    if (latest !== target) apply();
  }

  function redraw() {
    drawCard({
      question,
      counts: reveal ? reveal.counts : null,
      mine,
      reveal,
      onPick: isEnded ? null : pick,
    });
    const answered = $("session-answered");
    if (question && !reveal) answered.textContent = mine ? t("session.answered") : t("session.waiting");
  }

  async function pick(choice) {
    if (!question || reveal) return;
    const previous = mine;
    mine = choice;
    redraw();
    const answer = await request("POST", `/api/sessions/${code}/answers`, {
      body: { question_id: question.id, choice, device: deviceId() },
    });
    if (!answer.ok) {
      mine = previous;
      redraw();
      $("session-answered").textContent = t("session.answer_failed", { detail: detailOf(answer) });
    } else {
      $("session-question").dataset.answered = choice;
    }
  }

  function ended() {
    isEnded = true;
    root.dataset.connection = "ended";
    source?.close();
    source = null;
    status();
    if (question) redraw();
  }

  function connect() {
    source = openEvents(code, {
      state: (data) => { latest = data; apply(); },
      question: (data) => {
        if (question?.id !== data.question.id) { mine = null; reveal = null; }
        question = data.question;
        redraw();
      },
      reveal: (data) => { if (question && data.question_id === question.id) { reveal = data; redraw(); } },
      tally: () => {},
      ended: () => ended(),
    }, {
      onOpen: () => {
        root.dataset.connection = "open";
        root.dataset.opens = String(Number(root.dataset.opens || 0) + 1); // reconnects seen
        status();
      },
      onError: () => { root.dataset.connection = "reconnecting"; status(); },
      onClosed: async () => {
        // The server refused the stream (404 after a restart or the end; 429 when full)
        const check = await request("GET", `/api/sessions/${code}`);
        if (check.status === 404) ended();
        else {
          root.dataset.connection = "reconnecting";
          status();
          setTimeout(connect, RETRY_MS);
        }
      },
    });
  }

  function explore() {
    following = false;
    status();
  }

  $("session-explore").addEventListener("click", explore);
  $("session-follow").addEventListener("click", () => {
    following = true;
    appliedVersion = -1; // snap back even to a version this screen had before leaving
    status();
    apply();
  });
  // A student who moves a control while following leaves the lecture (their change stays).
  for (const type of ["input", "change"]) {
    document.querySelector(".controls")?.addEventListener(type, (e) => {
      if (!following || applying || !e.isTrusted || /** @type {HTMLElement} */ (e.target)?.id === "lang") return;
      explore();
    });
  }
  on("language", () => { status(); if (question) redraw(); });
  status();
  connect();
}
