// The request bodies of the page's state (/api/forward, /api/perturb) and the presets that
// set the shape; plain functions over the boot data and the (mutable) state object.
import { applySource } from "./inputs.js";
import { windowFields } from "./windows.js";

/**
 * Functions over `boot` (the server's presets and activations) and `state` (the page's
 * settings, changed in place): presetById, fixedInputs, requestBody, perturbBody,
 * tokenCount, applyPreset, dropStalePreset.
 */
export function makeBodies(boot, state) {
  function presetById(id) {
    return boot.presets.find((p) => p.id === id);
  }

  function fixedInputs() {
    const preset = presetById(state.preset);
    return preset && preset.weights ? preset : null;
  }

  /** The body shared by /api/forward and /api/perturb. */
  function requestBody() {
    const body = {
      d_model: state.d_model,
      d_ff: state.d_ff,
      activation: state.activation,
      seed: state.seed,
      bias: state.bias,
    };
    const fixed = fixedInputs();
    if (fixed) {
      body.tokens = fixed.tokens;
      body.weights = fixed.weights;
    } else {
      body.num_tokens = state.tokens;
      body.input_seed = state.input_seed;
    }
    if (state.mode === "train") {
      body.mode = "train";
      body.dropout = state.dropout;
      if (state.dropout_seed) body.dropout_seed = state.dropout_seed;
    }
    if (state.d_model <= 8 && state.d_ff <= 8) body.include_weights = true; // drawn beside the flow
    Object.assign(body, windowFields()); // which columns of a big tensor to send (windows.js)
    return applySource(body, state); // own data or typed text (static/js/panels/source.js)
  }

  function perturbBody() {
    return { ...requestBody(), position: state.position, scale: state.scale };
  }

  function tokenCount() {
    const fixed = fixedInputs();
    return fixed ? fixed.tokens.length : state.tokens;
  }

  function applyPreset(id) {
    const preset = presetById(id);
    state.preset = id;
    if (!preset) return;
    state.d_model = preset.d_model;
    state.d_ff = preset.d_ff;
    state.activation = preset.activation;
    state.bias = preset.bias;
    state.tokens = preset.tokens ? preset.tokens.length : preset.num_tokens;
  }

  /**
   * A preset is its shape (d_model, d_ff), activation and biases: changing one of them makes
   * the settings Custom. The number of tokens T is not part of a preset: moving it keeps the
   * preset named (one with its own tokens, the tiny one, keeps them: T stays theirs).
   * The tiny preset's numbers run under any plain activation, so only a gate (which they
   * have no weights for) makes it Custom.
   */
  function dropStalePreset() {
    const preset = presetById(state.preset);
    if (!preset) return;
    const gated = (name) => Boolean(boot.activations.find((a) => a.name === name)?.gated);
    const activationChanged = preset.weights
      ? gated(state.activation) !== gated(preset.activation)
      : state.activation !== preset.activation;
    if (state.d_model !== preset.d_model || state.d_ff !== preset.d_ff || state.bias !== preset.bias
        || activationChanged) {
      state.preset = "custom";
    } else if (preset.tokens) {
      state.tokens = preset.tokens.length;
    }
  }

  return { presetById, fixedInputs, requestBody, perturbBody, tokenCount, applyPreset, dropStalePreset };
}
