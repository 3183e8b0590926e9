// Requests of a class session (app/api/routes/sessions.py) and the refusal text to show.
import { t } from "../i18n.js";

/**
 * JSON request; resolves to { ok, status, data }. Never throws for an HTTP refusal.
 * @param {string} method
 * @param {string} url
 * @param {{ body?: unknown, token?: string }} [options]
 */
export async function request(method, url, { body, token } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    return { ok: false, status: 0, data: { detail: String(err) } };
  }
  let data = null;
  if (response.status !== 204) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  return { ok: response.ok, status: response.status, data };
}

/** A refusal's words: the server's message (a 422 names the field). */
export function detailOf(answer) {
  const detail = answer?.data?.detail;
  if (Array.isArray(detail)) return detail.map((d) => d.msg).join("; ");
  if (typeof detail === "string") return detail;
  return answer.status ? `HTTP ${answer.status}` : t("session.reconnecting");
}

/** This browser's anonymous device id (random, kept in localStorage): one answer each. */
export function deviceId() {
  const KEY = "ffnlab.device";
  let id = null;
  try {
    id = localStorage.getItem(KEY);
  } catch {
    id = null;
  }
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    id = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    try {
      localStorage.setItem(KEY, id);
    } catch {
      // private mode: a new id per page load (still one answer per page)
    }
  }
  return id;
}

/**
 * An EventSource on the session's events with handlers by event type. When the browser
 * gives up (the server answered an error, e.g. 404 after a restart), `onClosed` is called.
 * @param {string} code
 * @param {Record<string, (data: any, id: number) => void>} handlers
 * @param {{ onOpen?: () => void, onError?: () => void, onClosed?: () => void }} [callbacks]
 */
export function openEvents(code, handlers, { onOpen, onError, onClosed } = {}) {
  const source = new EventSource(`/api/sessions/${encodeURIComponent(code)}/events?device=${deviceId()}`);
  for (const [type, fn] of Object.entries(handlers)) {
    source.addEventListener(type, (e) => fn(JSON.parse(e.data), Number(e.lastEventId)));
  }
  source.addEventListener("open", () => onOpen?.());
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) onClosed?.();
    else onError?.();
  });
  return source;
}
