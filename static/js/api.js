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
   * to that answer's very `data` object ({ data, ms, reused: true }, `ms` of the original
   * call). Only for deterministic endpoints (the FFN's are: everything is seeded); charts
   * skip redrawing the object they drew last time.
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

  /** POST `body` as JSON; resolves to { data, ms } or { stale: true } for superseded calls. */
  async post(url, body) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const seq = ++this.seq;
    const text = JSON.stringify(body);
    if (this.reuse && this.last && this.last.url === url && this.last.text === text) {
      return { data: this.last.data, ms: this.last.ms, reused: true };
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
    this.last = { url, text, data, ms };
    return { data, ms };
  }
}

export async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new ApiError(response.status, await response.json());
  return response.json();
}
