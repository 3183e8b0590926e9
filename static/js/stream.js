// NDJSON streams from the server (POST /api/train...): one JSON object per line, handed to
// `onRecord` as each line arrives. Aborting `signal` closes the connection, which stops the
// server's work.
import { ApiError } from "./api.js";

/** POST `body` to `url` and call onRecord(object) per line; resolves when the stream ends. */
export async function postNdjson(url, body, onRecord, signal) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw new ApiError(response.status, await response.json());
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onRecord(JSON.parse(line));
      newline = buffer.indexOf("\n");
    }
  }
  if (buffer.trim()) onRecord(JSON.parse(buffer));
}
