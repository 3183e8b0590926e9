// The page state, declared once: each setting has a type, a default and its allowed values.
// The same schema drives the controls, parsing of the URL (with fallback and a notice for
// every value that was refused) and writing it back (only values that differ from defaults).

/** Controls a teacher can hide in embed mode with `hide=a,b` (data-control="name" wrappers). */
export const HIDEABLE = [
  "preset", "d_model", "d_ff", "tokens", "activation", "bias", "seed", "input_seed",
  "mode", "dropout", "panel", "lang", "position", "scale",
];

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
    lang: { type: "enum", default: "", values: ["", "en", "zh-CN"] },
    source: { type: "enum", default: "random", values: ["random", "own", "text"] },
    text: { type: "string", default: "The cat sat on the mat.", maxLength: limits.max_text_chars ?? 500 },
    layer: { type: "int", default: 0, min: 0, max: 5 },
    embed: { type: "bool", default: false },
    hide: { type: "list", default: [], values: HIDEABLE },
    lesson: { type: "bool", default: false },
    step: { type: "int", default: 1, min: 1, max: steps },
    big: { type: "bool", default: false },
    // issue 13: the stack panel and the training panel
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
      return spec.values.includes(raw) ? raw : undefined;
    case "list": {
      const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
      return items.every((s) => spec.values.includes(s)) ? [...new Set(items)] : undefined;
    }
    default:
      return undefined;
  }
}

function sameValue(spec, a, b) {
  if (spec.type === "list") return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/**
 * Read the state from a query string.
 * Returns { state, invalid: [{ name, raw }] of refused values, present: Set of given names }.
 * A list keeps its valid items when some are refused (and reports the refused ones).
 */
export function parseState(schema, search) {
  const params = new URLSearchParams(search);
  const state = {};
  const invalid = [];
  const present = new Set();
  for (const [name, spec] of Object.entries(schema)) {
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
  for (const name of params.keys()) {
    if (!(name in schema) && !invalid.some((e) => e.name === name)) {
      invalid.push({ name, raw: params.get(name) });
    }
  }
  return { state, invalid, present };
}

/** The query string for a state: only values that differ from their defaults. */
export function formatState(schema, state) {
  const params = new URLSearchParams();
  for (const [name, spec] of Object.entries(schema)) {
    const value = state[name];
    if (value === undefined || sameValue(spec, value, spec.default)) continue;
    if (spec.type === "bool") params.set(name, value ? "1" : "0");
    else if (spec.type === "list") params.set(name, value.join(","));
    else params.set(name, String(value));
  }
  const text = params.toString().replaceAll("%2C", ",");
  return text ? `?${text}` : "";
}

/** The page's URL for a state (absolute), e.g. for "copy link". */
export function stateUrl(schema, state, overrides = {}) {
  const url = new URL(window.location.href);
  url.search = formatState(schema, { ...state, ...overrides });
  url.hash = "";
  return url.toString();
}

/** Write the state into the address bar without a new history entry. */
export function writeState(schema, state) {
  const url = `${window.location.pathname}${formatState(schema, state)}${window.location.hash}`;
  window.history.replaceState(null, "", url);
}
