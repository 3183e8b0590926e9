// The lecturer's side of a class session: start it, show the code, link and QR, publish
// every change of the page (debounced; the last state always goes out), ask questions,
// watch the tally and reveal the FFN's answer. The presenter token lives in this tab's
// sessionStorage only: a reload keeps the session, no link carries it.
import { on } from "../bus.js";
import { t } from "../i18n.js";
import { drawCard } from "./card.js";
import { detailOf, openEvents, request } from "./net.js";
import { publishedState } from "./shared.js";

const $ = (id) => document.getElementById(id);
const STORE_KEY = "ffnlab.session";
/** Changes closer than this are sent together (the newest state wins). */
const MIN_GAP_MS = 120;
const KINDS = ["rows_changed", "zero_fraction", "parameter_count", "params_when_t_doubles", "shape_of", "gelu_zeros"];

function saved() {
  try {
    const raw = sessionStorage.getItem(STORE_KEY);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/** The panel the lecturer is looking at: the chosen one, else the one at the top of the view. */
function panelInView(app) {
  if (app.state.panel) return app.state.panel;
  const sections = [...document.querySelectorAll("main > section")].filter((s) => !s.hidden && s.offsetParent !== null);
  const top = sections.find((s) => s.getBoundingClientRect().bottom > window.innerHeight * 0.25);
  return top && app.schema.panel.values.includes(top.id) && top !== sections[0] ? top.id : "";
}

export function initLecturer(app) {
  const root = $("session");
  let session = null; // the POST /api/sessions answer: code, presenter_token, join_url, qr_svg
  let source = null;
  let sentJson = "";
  let inFlight = false;
  let timer = null;
  let lastSent = 0;
  let question = null;
  let counts = null;
  let reveal = null;

  function setSync(text) {
    $("session-sync").textContent = text;
  }

  function redraw() {
    drawCard({ question, counts: counts ?? (question ? Object.fromEntries(question.choices.map((c) => [c.id, 0])) : null), reveal });
    $("session-reveal").disabled = !question || Boolean(reveal);
  }

  async function publish() {
    timer = null;
    if (!session) return;
    const body = publishedState(app.schema, app.state, { panel: panelInView(app) });
    const json = JSON.stringify(body);
    if (json === sentJson) {
      if (!inFlight) delete root.dataset.pending;
      return;
    }
    if (inFlight) {
      schedule();
      return;
    }
    inFlight = true;
    lastSent = performance.now();
    const answer = await request("PUT", `/api/sessions/${session.code}/state`, { body, token: session.presenter_token });
    inFlight = false;
    if (answer.ok) {
      sentJson = json;
      root.dataset.version = String(answer.data.version);
      setSync(t("session.synced", { version: answer.data.version }));
    } else if (answer.status === 404) {
      ended();
      return;
    } else {
      setSync(t("session.sync_failed", { detail: detailOf(answer) }));
      if (answer.status === 429 || answer.status === 0) {
        setTimeout(schedule, 1000); // flooded or offline: the last state goes out later
        return;
      }
      sentJson = json; // refused (403, 422): said above; the next change tries again
    }
    // a change made while this one was on its way: send it too (the last state always goes)
    if (JSON.stringify(publishedState(app.schema, app.state, { panel: panelInView(app) })) !== sentJson) schedule();
    else delete root.dataset.pending; // tests and the sync line: everything is out
  }

  function schedule() {
    if (!session) return;
    root.dataset.pending = "1";
    if (timer) return;
    const wait = Math.max(0, MIN_GAP_MS - (performance.now() - lastSent));
    timer = setTimeout(publish, inFlight ? MIN_GAP_MS : wait);
  }

  function show() {
    root.hidden = false;
    document.body.dataset.sessionRole = "lecturer";
    $("session-lecturer").hidden = false;
    $("session-code").textContent = session.code;
    const link = $("session-link");
    link.href = session.join_url;
    link.textContent = session.join_absolute;
    $("session-qr").src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(session.qr_svg)}`;
    $("session-qr").alt = t("session.qr_title");
    $("session-start").hidden = true;
    root.dataset.code = session.code;
    showLoopback();
  }

  /** A join link on 127.0.0.1 or localhost reaches no phone: said beside the QR code. */
  function showLoopback() {
    const note = $("session-loopback");
    const host = location.hostname.replace(/^\[|\]$/g, "");
    const loopback = host === "localhost" || host === "::1" || host.startsWith("127.");
    note.hidden = !session || !loopback;
    if (!note.hidden) note.textContent = t("session.loopback", { host: location.host });
  }

  function listen() {
    source?.close();
    source = openEvents(session.code, {
      question: (data) => { question = data.question; counts = null; reveal = null; redraw(); },
      tally: (data) => { if (question && data.question_id === question.id) { counts = data.counts; redraw(); } },
      reveal: (data) => { if (question && data.question_id === question.id) { reveal = data; counts = data.counts; redraw(); } },
      ended: () => ended(),
    }, {
      onClosed: async () => {
        const check = await request("GET", `/api/sessions/${session.code}`);
        if (check.status === 404) ended();
        else setTimeout(listen, 2000);
      },
    });
  }

  function ended() {
    source?.close();
    source = null;
    session = null;
    try {
      sessionStorage.removeItem(STORE_KEY);
    } catch {
      // storage refused: nothing kept anyway
    }
    $("session-lecturer").hidden = true;
    $("session-question").hidden = true;
    $("session-start").hidden = false;
    const message = $("session-message");
    message.hidden = false;
    message.textContent = t("session.ended_lecturer");
    root.dataset.connection = "ended";
  }

  async function start() {
    const message = $("session-message");
    root.hidden = false;
    message.hidden = false;
    message.textContent = t("session.starting");
    const answer = await request("POST", "/api/sessions");
    if (!answer.ok) {
      message.textContent = t("session.start_failed", { detail: detailOf(answer) });
      return;
    }
    message.hidden = true;
    session = answer.data;
    try {
      sessionStorage.setItem(STORE_KEY, JSON.stringify(session));
    } catch {
      // the session still runs; a reload will not find it
    }
    begin();
  }

  function begin() {
    delete root.dataset.connection;
    show();
    sentJson = "";
    publish();
    listen();
  }

  for (const kind of KINDS) {
    const option = document.createElement("option");
    option.value = kind;
    option.dataset.i18n = `session.kind.${kind}`;
    option.textContent = t(`session.kind.${kind}`);
    $("session-kind").append(option);
  }
  $("session-start").addEventListener("click", start);
  $("session-ask").addEventListener("click", async () => {
    await publish(); // the question is about the page as it is now
    const answer = await request("POST", `/api/sessions/${session.code}/questions`, {
      body: { kind: $("session-kind").value }, token: session.presenter_token,
    });
    if (!answer.ok) setSync(detailOf(answer));
    else { question = answer.data; counts = null; reveal = null; redraw(); }
  });
  $("session-reveal").addEventListener("click", async () => {
    if (!question) return;
    $("session-reveal").disabled = true;
    const answer = await request("POST", `/api/sessions/${session.code}/questions/${question.id}/reveal`, { token: session.presenter_token });
    if (!answer.ok) {
      setSync(detailOf(answer));
      $("session-reveal").disabled = false;
    } else {
      reveal = answer.data;
      counts = answer.data.counts;
      redraw();
    }
  });
  $("session-collapse").addEventListener("click", () => {
    const collapsed = root.classList.toggle("collapsed");
    const button = $("session-collapse");
    button.dataset.i18n = collapsed ? "session.expand" : "session.collapse";
    button.textContent = t(button.dataset.i18n);
    button.setAttribute("aria-expanded", String(!collapsed));
  });
  $("session-end").addEventListener("click", async () => {
    if (!session || !window.confirm(t("session.end_confirm"))) return;
    const answer = await request("DELETE", `/api/sessions/${session.code}`, { token: session.presenter_token });
    if (answer.ok || answer.status === 404) ended();
  });

  on("state", () => schedule());
  on("language", () => { showLoopback(); if (question) redraw(); });
  let scrollFrame = 0;
  window.addEventListener("scroll", () => {
    if (!session || scrollFrame) return;
    scrollFrame = requestAnimationFrame(() => { scrollFrame = 0; schedule(); });
  }, { passive: true });

  // A reload keeps the session: the tab's storage still has it (if the server does).
  const kept = saved();
  if (kept?.code && kept?.presenter_token) {
    request("GET", `/api/sessions/${kept.code}`).then((answer) => {
      if (answer.ok) {
        session = kept;
        question = answer.data.question;
        reveal = answer.data.reveal;
        counts = reveal?.counts ?? null;
        begin();
        redraw();
      } else if (answer.status === 404) {
        session = kept;
        show();
        ended();
      }
    });
  }
}
