// The page state, declared once: each setting has a type, a default and its allowed values.
// The same schema drives parsing of the URL (with fallback) and writing it back.

/** Build the schema from the server's boot data (activations, presets, limits). */
export function makeSchema(boot) {
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
    lang: { type: "enum", default: "", values: ["", "en", "zh-CN"] },
    source: { type: "enum", default: "random", values: ["random", "own", "text"] },
    text: { type: "string", default: "The cat sat on the mat.", maxLength: limits.max_text_chars ?? 500 },
    layer: { type: "int", default: 0, min: 0, max: 5 },
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
      return raw !== "" && Number.isFinite(x) && x >= spec.min && x <= spec.max ? x : undefined;
    }
    case "bool":
      return raw === "1" || raw === "true" ? true : raw === "0" || raw === "false" ? false : undefined;
    case "string":
      return raw.length <= spec.maxLength ? raw : undefined;
    case "enum":
      return spec.values.includes(raw) ? raw : undefined;
    default:
      return undefined;
  }
}

/** Read the state from a query string; returns { state, invalid: [names of bad values] }. */
export function parseState(schema, search) {
  const params = new URLSearchParams(search);
  const state = {};
  const invalid = [];
  for (const [name, spec] of Object.entries(schema)) {
    const raw = params.get(name);
    const value = raw === null ? undefined : parseValue(spec, raw);
    if (raw !== null && value === undefined) invalid.push(name);
    state[name] = value === undefined ? spec.default : value;
  }
  return { state, invalid };
}

/** The query string for a state: only values that differ from their defaults. */
export function formatState(schema, state) {
  const params = new URLSearchParams();
  for (const [name, spec] of Object.entries(schema)) {
    const value = state[name];
    if (value === spec.default || value === undefined) continue;
    params.set(name, spec.type === "bool" ? (value ? "1" : "0") : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Write the state into the address bar without a new history entry. */
export function writeState(schema, state) {
  const url = `${window.location.pathname}${formatState(schema, state)}${window.location.hash}`;
  window.history.replaceState(null, "", url);
}
