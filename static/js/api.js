// The JSON API client. A LatestOnly requester aborts the previous request when a new one
// starts and drops any answer that is not the newest, so a stale answer never overwrites.

export class ApiError extends Error {
  constructor(status, detail) {
    super(ApiError.describe(detail));
    this.status = status;
    this.detail = detail;
  }

  static describe(detail) {
    if (Array.isArray(detail?.detail)) {
      return detail.detail.map((e) => {
        const field = (e.loc || []).filter((p) => p !== "body").join(".");
        return field ? `${field}: ${e.msg}` : e.msg; // a whole-body check has no field
      }).join("; ");
    }
    return typeof detail?.detail === "string" ? detail.detail : JSON.stringify(detail);
  }
}

// One id per page load: with the requester's number it makes the supersede key, so the
// server drops this requester's queued or running older work (X-FFN-Lab-Supersede, see
// app/services/compute.py). getRandomValues works on a plain-http classroom LAN too.
const SESSION = Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => n.toString(36)).join("");
let requesters = 0;

export class LatestOnly {
  /**
   * reuse: when true, a POST of the same url and body as the newest answer resolves at once
   * to that answer's very `data` object ({ data, ms, roundTripMs, reused: true }, the times
   * of the original call). Only for deterministic endpoints (the FFN's are: everything is
   * seeded); charts skip redrawing the object they drew last time.
   */
  constructor({ reuse = false } = {}) {
    this.seq = 0;
    this.controller = null;
    this.reuse = reuse;
    this.last = null; // { url, text, data, ms } of the newest answer
    this.key = `${SESSION}/${++requesters}`;
  }

  /** Abort the request in flight (its caller gets { stale: true }). */
  abort() {
    this.controller?.abort();
    this.seq += 1;
  }

  /**
   * POST `body` as JSON; resolves to { data, ms, roundTripMs } or { stale: true } for
   * superseded calls. `ms` is until the page had the answer, `roundTripMs` the request's
   * round trip alone (see roundTrip below).
   */
  async post(url, body) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const seq = ++this.seq;
    const text = JSON.stringify(body);
    if (this.reuse && this.last && this.last.url === url && this.last.text === text) {
      return { data: this.last.data, ms: this.last.ms, roundTripMs: this.last.roundTripMs, reused: true };
    }
    const started = performance.now();
    let response;
    let data;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-ffn-lab-supersede": this.key },
        body: text,
        signal: controller.signal,
      });
      data = await response.json(); // an abort while the body streams in rejects here too
    } catch (err) {
      if (err.name === "AbortError" || seq !== this.seq) return { stale: true };
      throw err;
    }
    if (seq !== this.seq) return { stale: true };
    if (!response.ok) throw new ApiError(response.status, data);
    const ms = performance.now() - started;
    const roundTripMs = roundTrip(response.url, started) ?? ms;
    this.last = { url, text, data, ms, roundTripMs };
    return { data, ms, roundTripMs };
  }
}

/**
 * The request's round trip as the browser's network stack timed it (Resource Timing: from
 * the fetch to the last byte of the answer), or undefined when the browser has no entry.
 * `ms` above also holds the time the page's own work (start-up, drawing) kept the answer
 * waiting on the main thread; this one does not.
 */
function roundTrip(url, started) {
  const entries = performance.getEntriesByName(url, "resource");
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const e = entries[i];
    if (e.startTime >= started - 1 && e.responseEnd > 0) return e.responseEnd - e.startTime;
  }
  return undefined;
}

// The browser keeps 250 resource entries by default; the page's own requests would fill it,
// so older entries (read at once above) are dropped when it is full.
if (typeof performance !== "undefined" && performance.clearResourceTimings) {
  performance.addEventListener?.("resourcetimingbufferfull", () => performance.clearResourceTimings());
}

export async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new ApiError(response.status, await response.json());
  return response.json();
}
