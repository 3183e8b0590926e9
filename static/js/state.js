// The page state, declared once: each setting has a type, a default and its allowed values.
// The same schema drives the controls, parsing of the URL (with fallback and a notice for
// every value that was refused) and writing it back (only values that differ from defaults).
// Own numbers (pasted vectors, typed weights) go in the fragment (`#x=...&w=...`), as base64
// of float32 (little-endian), so a link reproduces them without sending them to a server.

/** Controls a teacher can hide in embed mode with `hide=a,b` (data-control="name" wrappers). */
export const HIDEABLE = [
  "preset", "d_model", "d_ff", "tokens", "activation", "bias", "seed", "input_seed",
  "mode", "dropout", "panel", "lang", "position", "scale",
];

/** Language tags a link may use for the page's two languages (lower-cased). */
const LANGUAGE_ALIASES = {
  zh: "zh-CN", "zh-cn": "zh-CN", "zh-hans": "zh-CN", "zh-hans-cn": "zh-CN",
  "en-us": "en", "en-gb": "en",
};

/** Build the schema from the server's boot data (activations, presets, limits, panels). */
export function makeSchema(boot, { steps = 1 } = {}) {
  const limits = boot.limits;
  return {
    preset: { type: "enum", default: "custom", values: ["custom", ...boot.presets.map((p) => p.id)] },
    d_model: { type: "int", default: 16, min: 1, max: limits.max_d_model },
    d_ff: { type: "int", default: 64, min: 1, max: limits.max_d_ff },
    activation: { type: "enum", default: "relu", values: boot.activations.map((a) => a.name) },
    tokens: { type: "int", default: 6, min: 1, max: limits.max_tokens },
    bias: { type: "bool", default: true },
    seed: { type: "int", default: 0, min: 0, max: 2 ** 31 - 1 },
    input_seed: { type: "int", default: 0, min: 0, max: 2 ** 31 - 1 },
    position: { type: "int", default: 0, min: 0, max: limits.max_tokens - 1 },
    scale: { type: "float", default: 1, min: 0, max: 5 },
    mode: { type: "enum", default: "eval", values: ["eval", "train"] },
    dropout: { type: "float", default: 0.1, min: 0, max: 0.9 },
    panel: { type: "enum", default: "", values: ["", ...(boot.panels || [])] },
    // a link may name the language as people write it ("zh", "zh-cn", "en-US")
    lang: { type: "enum", default: "", values: ["", "en", "zh-CN"], aliases: LANGUAGE_ALIASES },
    source: { type: "enum", default: "random", values: ["random", "own", "text"] },
    text: { type: "string", default: "The cat sat on the mat.", maxLength: limits.max_text_chars ?? 500 },
    layer: { type: "int", default: 0, min: 0, max: 5 },
    embed: { type: "bool", default: false },
    hide: { type: "list", default: [], values: HIDEABLE },
    lesson: { type: "bool", default: false },
    step: { type: "int", default: 1, min: 1, max: steps },
    big: { type: "bool", default: false },
    // the teaching panels' own settings and the selected neuron
    heads: { type: "int", default: 1, min: 1, max: limits.max_heads ?? 64 },
    norm: { type: "enum", default: "post", values: ["post", "pre"] },
    match: { type: "bool", default: false },
    dropout_seed: { type: "int", default: 0, min: 0, max: 2 ** 31 - 2 },
    unit: { type: "int", default: -1, min: -1, max: limits.max_d_ff - 1 },
    // own numbers, in the fragment: x = the input rows [T, d_model], w = the typed weights
    x: { type: "matrix", default: null, fragment: true, maxRows: limits.max_tokens, maxCols: limits.max_d_model },
    w: { type: "weights", default: null, fragment: true },
    // the stack panel and the training panel
    layers: { type: "int", default: 4, min: 1, max: 12 },
    stack_attention: { type: "bool", default: false },
    stack_share: { type: "bool", default: false },
    stack_norm: { type: "enum", default: "post", values: ["post", "pre"] },
    train_d_ff: { type: "int", default: 64, min: 1, max: 256 },
    train_act: { type: "enum", default: "relu", values: ["relu", "gelu", "silu"] },
    train_lr: { type: "float", default: 0.03, min: 0.0001, max: 1 },
    train_steps: { type: "int", default: 300, min: 1, max: 1000 },
    train_compare: { type: "bool", default: true },
    cheap_rank: { type: "int", default: 0, min: 0, max: limits.max_d_model },
  };
}

function parseValue(spec, raw) {
  switch (spec.type) {
    case "int": {
      if (!/^-?\d+$/.test(raw)) return undefined;
      const n = Number(raw);
      return n >= spec.min && n <= spec.max ? n : undefined;
    }
    case "float": {
      const x = Number(raw);
      return raw.trim() !== "" && Number.isFinite(x) && x >= spec.min && x <= spec.max ? x : undefined;
    }
    case "bool":
      return raw === "1" || raw === "true" ? true : raw === "0" || raw === "false" ? false : undefined;
    case "string":
      return raw.length <= spec.maxLength ? raw : undefined;
    case "enum":
      return spec.values.includes(raw) ? raw : spec.aliases?.[raw.toLowerCase()];
    case "list": {
      const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
      return items.every((s) => spec.values.includes(s)) ? [...new Set(items)] : undefined;
    }
    default:
      return undefined;
  }
}

function sameValue(spec, a, b) {
  if (spec.fragment) return a === b;
  if (spec.type === "list") return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/**
 * Read the state from a query string.
 * Returns { state, invalid: [{ name, raw }] of refused values, present: Set of given names }.
 * A list keeps its valid items when some are refused (and reports the refused ones).
 */
export function parseState(schema, search, hash = "") {
  const params = new URLSearchParams(search);
  const fragment = new URLSearchParams(hash.replace(/^#/, ""));
  const state = {};
  const invalid = [];
  const present = new Set();
  for (const [name, spec] of Object.entries(schema)) {
    if (spec.fragment) {
      const raw = fragment.get(name);
      const value = raw === null ? undefined : decodeFragment(spec, raw);
      if (raw !== null && value === undefined) invalid.push({ name, raw: raw.slice(0, 24) });
      if (value !== undefined) present.add(name);
      state[name] = value === undefined ? spec.default : value;
      continue;
    }
    const raw = params.get(name);
    let value = raw === null ? undefined : parseValue(spec, raw);
    if (raw !== null && value === undefined) {
      invalid.push({ name, raw });
      if (spec.type === "list") {
        const kept = raw.split(",").map((s) => s.trim()).filter((s) => spec.values.includes(s));
        value = kept.length ? [...new Set(kept)] : undefined;
      }
    }
    if (value !== undefined) present.add(name);
    state[name] = value === undefined ? structuredClone(spec.default) : value;
  }
  const named = new Set(invalid.map((e) => e.name)); // linear in the link, however many names
  for (const [name, raw] of params) {
    if (!(name in schema) && !named.has(name)) {
      named.add(name);
      invalid.push({ name, raw });
    }
  }
  return { state, invalid, present };
}

/** The query string for a state: only values that differ from their defaults. */
export function formatState(schema, state) {
  const params = new URLSearchParams();
  for (const [name, spec] of Object.entries(schema)) {
    const value = state[name];
    if (spec.fragment || value === undefined || sameValue(spec, value, spec.default)) continue;
    if (spec.type === "bool") params.set(name, value ? "1" : "0");
    else if (spec.type === "list") params.set(name, value.join(","));
    else params.set(name, String(value));
  }
  const text = params.toString().replaceAll("%2C", ",");
  return text ? `?${text}` : "";
}

/** Longest fragment a shared link carries (characters); own numbers beyond it are left out. */
export const MAX_FRAGMENT_CHARS = 16_000;

const encoded = new WeakMap(); // value -> its fragment text (a slider step re-encodes nothing)

/**
 * The fragment for a state's own numbers: { text, tooLarge }, text e.g. #x=...&w=... (or
 * empty), tooLarge the names left out.
 * A value whose encoding would pass MAX_FRAGMENT_CHARS is left out and named in tooLarge.
 */
export function formatFragment(schema, state) {
  const parts = [];
  const tooLarge = [];
  let used = 0;
  for (const [name, spec] of Object.entries(schema)) {
    const value = state[name];
    if (!spec.fragment || value === null || value === undefined) continue;
    if (!encoded.has(value)) encoded.set(value, encodeFragment(spec, value));
    const text = `${name}=${encoded.get(value)}`;
    if (used + text.length > MAX_FRAGMENT_CHARS) {
      tooLarge.push(name);
      continue;
    }
    used += text.length + 1;
    parts.push(text);
  }
  return { text: parts.length ? `#${parts.join("&")}` : "", tooLarge };
}

/** The page's URL for a state (absolute), e.g. for "copy link"; own numbers in the fragment. */
export function stateUrl(schema, state, overrides = {}) {
  const url = new URL(window.location.href);
  const full = { ...state, ...overrides };
  url.search = formatState(schema, full);
  url.hash = formatFragment(schema, full).text;
  return url.toString();
}

/** Write the state into the address bar without a new history entry. */
export function writeState(schema, state) {
  const url = `${window.location.pathname}${formatState(schema, state)}${formatFragment(schema, state).text}`;
  window.history.replaceState(null, "", url);
}

// ---- own numbers as base64url float32 ----

function toBase64Url(floats) {
  const bytes = new Uint8Array(Float32Array.from(floats).buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  let binary;
  try {
    binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
  if (binary.length % 4) return undefined;
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return [...new Float32Array(bytes.buffer)].map(shortest);
}

/** The shortest decimal that is the same float32 (0.30000001192... -> 0.3). */
export function shortest(x) {
  if (!Number.isFinite(x)) return x;
  for (let digits = 1; digits <= 9; digits += 1) {
    const y = Number(x.toPrecision(digits));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

const WEIGHT_ORDER = ["w1", "b1", "w2", "b2", "w_gate", "b_gate"];

function encodeFragment(spec, value) {
  if (spec.type === "matrix") return `${value.length}x${value[0].length}.${toBase64Url(value.flat())}`;
  // weights: name:shape pieces, then the numbers in that order, e.g. w1:2x4,b1:4,...
  const names = WEIGHT_ORDER.filter((k) => value[k]);
  const head = names.map((k) => {
    const v = value[k];
    return `${k}:${Array.isArray(v[0]) ? `${v.length}x${v[0].length}` : v.length}`;
  }).join(",");
  return `${head}.${toBase64Url(names.flatMap((k) => value[k].flat()))}`;
}

// Decoding is bounded by the link: a value longer than MAX_FRAGMENT_CHARS is refused unread,
// and every declared shape is checked against the numbers present before a row is made
// (a head such as w1:100000000x0 declares no numbers but 10^8 rows: refused at once).
function decodeFragment(spec, raw) {
  if (raw.length > MAX_FRAGMENT_CHARS) return undefined;
  const dot = raw.indexOf(".");
  if (dot < 0) return undefined;
  const numbers = fromBase64Url(raw.slice(dot + 1));
  if (!numbers || numbers.some((x) => !Number.isFinite(x))) return undefined;
  const head = raw.slice(0, dot);
  if (spec.type === "matrix") {
    const m = /^(\d+)x(\d+)$/.exec(head);
    if (!m) return undefined;
    const [rows, cols] = [Number(m[1]), Number(m[2])];
    if (rows < 1 || cols < 1 || rows > spec.maxRows || cols > spec.maxCols || rows * cols !== numbers.length) return undefined;
    return Array.from({ length: rows }, (_, i) => numbers.slice(i * cols, (i + 1) * cols));
  }
  const out = {};
  let at = 0;
  for (const piece of head.split(",")) {
    const m = /^(\w+):(\d+)(?:x(\d+))?$/.exec(piece);
    if (!m || !WEIGHT_ORDER.includes(m[1]) || m[1] in out) return undefined;
    const rows = Number(m[2]);
    const cols = m[3] === undefined ? 1 : Number(m[3]);
    // every piece holds at least one number, and no more than the link carries
    if (rows < 1 || cols < 1 || at + rows * cols > numbers.length) return undefined;
    if (m[3] === undefined) {
      out[m[1]] = numbers.slice(at, at + rows);
    } else {
      out[m[1]] = Array.from({ length: rows }, (_, i) => numbers.slice(at + i * cols, at + (i + 1) * cols));
    }
    at += rows * cols;
  }
  return at === numbers.length && out.w1 && out.w2 ? out : undefined;
}
