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
      return detail.detail.map((e) => `${(e.loc || []).filter((p) => p !== "body").join(".")}: ${e.msg}`).join("; ");
    }
    return typeof detail?.detail === "string" ? detail.detail : JSON.stringify(detail);
  }
}

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
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: text,
        signal: controller.signal,
      });
    } catch (err) {
      if (err.name === "AbortError" || seq !== this.seq) return { stale: true };
      throw err;
    }
    const data = await response.json();
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
