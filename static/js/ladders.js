// Slider positions for d_model and d_ff: a ladder of common widths (the presets' included).
export const D_MODEL_STEPS = [2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 768, 1024, 2048, 4096];
export const D_FF_STEPS = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 8192, 11008, 16384];

/** The ladder up to `max`, with `value` inserted if it is not a step already. */
export function ladder(steps, max, value) {
  const values = steps.filter((s) => s <= max);
  if (value !== undefined && !values.includes(value)) values.push(value);
  return values.sort((a, b) => a - b);
}

/** FFN parameters of a shape (app/model/ffn.py expected_shapes): 2 matrices, or 3 if gated. */
export function ffnParams(dModel, dFf, gated, bias) {
  const matrices = gated ? 3 : 2;
  const biases = bias ? (gated ? 2 : 1) * dFf + dModel : 0;
  return matrices * dModel * dFf + biases;
}

/**
 * The ladder's steps that the server accepts with the other width fixed: params(step) must
 * stay within `maxParams` (boot limits). `value` is kept even when over (it shows why the
 * server refused a link), so the slider can still point at it.
 */
export function fitLadder(steps, max, value, fits) {
  return ladder(steps.filter((s) => s <= max && fits(s)), max, value);
}
