// The current run as JSON (everything the API answered, plus the state and link) and as a
// long CSV table: one row per number, `tensor,position,index,value`.

/**
 * JSON text: { app, url, state, request, forward, perturb }. `state` holds the shape that
 * really ran (d_model, d_ff, activation, bias, tokens from the answer's `config`), so in
 * typed-text mode it is the pretrained layer's, not the seeded sliders' values.
 */
export function runJson(app, body, url) {
  const { forward, perturb } = app.last();
  const c = forward?.config;
  const ran = c ? {
    d_model: c.d_model, d_ff: c.d_ff, activation: c.activation, bias: c.bias, tokens: c.num_tokens,
  } : {};
  const state = { ...app.state, ...ran };
  return JSON.stringify({ app: "FFN Lab", url, state, request: body, forward, perturb }, null, 1);
}

const FORWARD_TENSORS = ["input", "pre_activation", "up", "hidden", "output"];
const PERTURB_TENSORS = ["input_perturbed", "output_perturbed", "output_delta"];

/** CSV text of every [T, n] tensor of the last forward and perturb answers. */
export function runCsv({ forward, perturb }) {
  const rows = ["tensor,position,index,value"];
  const addTensor = (name, matrix) => {
    if (!matrix) return;
    matrix.forEach((row, position) => row.forEach((value, index) => {
      rows.push(`${name},${position},${index},${Number(value)}`);
    }));
  };
  if (forward) for (const name of FORWARD_TENSORS) addTensor(name, forward[name]);
  if (perturb) for (const name of PERTURB_TENSORS) addTensor(name, perturb[name]);
  return `${rows.join("\n")}\n`;
}
