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
  constructor() {
    this.seq = 0;
    this.controller = null;
  }

  /** POST `body` as JSON; resolves to { data, ms } or { stale: true } for superseded calls. */
  async post(url, body) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const seq = ++this.seq;
    const started = performance.now();
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
    } catch (err) {
      if (err.name === "AbortError" || seq !== this.seq) return { stale: true };
      throw err;
    }
    const data = await response.json();
    if (seq !== this.seq) return { stale: true };
    if (!response.ok) throw new ApiError(response.status, data);
    return { data, ms: performance.now() - started };
  }
}

export async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new ApiError(response.status, await response.json());
  return response.json();
}
