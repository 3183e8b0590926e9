"""What each FFN tensor is called in the libraries students read models with next.

One pure table: for every tensor FFN Lab shows (input, pre_activation, up, hidden, output and
the weights), its TransformerLens 4 hook or parameter, its Hugging Face transformers module
path in the model family in view, the nnsight path that reads it, and its shape in FFN Lab's
words. No torch, no transformers: tests/names/ checks every name and snippet against real
transformers modules built from configs and TransformerLens 4's `TransformerBridge`.

Families (the top-level class the paths start from; `{layer}` is the layer index):

- "bert": transformers' `BertModel` (MiniLM is one): `encoder.layer[{layer}].intermediate.dense`
  is W1 (nn.Linear, weight [d_ff, d_model]), `encoder.layer[{layer}].output.dense` is W2;
  BertOutput's LayerNorm and residual come after the FFN.
- "gpt2": `GPT2LMHeadModel`: `transformer.h[{layer}].mlp.c_fc` is W1 and `.c_proj` W2, both
  `Conv1D`s that store weight [in, out] (the paper's orientation).
- "llama": `LlamaForCausalLM`: `model.layers[{layer}].mlp.gate_proj` (W_gate),
  `up_proj` (W1), `down_proj` (W2), nn.Linears without bias; Gemma and Mistral use the same.

TransformerLens 4 (`TransformerBridge`) names the hooks of every family alike:
`blocks.{layer}.mlp.hook_in` (the FFN's input), `hook_pre` (x W1, or x W_gate when gated),
`hook_pre_linear` (the gated up branch, x W1), `hook_post` (the hidden layer) and
`blocks.{layer}.hook_mlp_out` (the FFN's output); `HookedTransformer` is gone since 4.0.
"""

from __future__ import annotations

from typing import Any, Literal

Family = Literal["bert", "gpt2", "llama"]

FAMILIES: dict[Family, dict[str, str]] = {
    "bert": {
        "label": "BERT",
        "class": "BertModel",
        "mlp": "encoder.layer[{layer}]",
        "up": "encoder.layer[{layer}].intermediate.dense",
        "act": "encoder.layer[{layer}].intermediate.intermediate_act_fn",
        "down": "encoder.layer[{layer}].output.dense",
        "input": "encoder.layer[{layer}].intermediate",
        "linear": "nn.Linear",
    },
    "gpt2": {
        "label": "GPT-2",
        "class": "GPT2LMHeadModel",
        "mlp": "transformer.h[{layer}].mlp",
        "up": "transformer.h[{layer}].mlp.c_fc",
        "act": "transformer.h[{layer}].mlp.act",
        "down": "transformer.h[{layer}].mlp.c_proj",
        "input": "transformer.h[{layer}].mlp",
        "linear": "Conv1D",
    },
    "llama": {
        "label": "LLaMA",
        "class": "LlamaForCausalLM",
        "mlp": "model.layers[{layer}].mlp",
        "gate": "model.layers[{layer}].mlp.gate_proj",
        "up": "model.layers[{layer}].mlp.up_proj",
        "act": "model.layers[{layer}].mlp.act_fn",
        "down": "model.layers[{layer}].mlp.down_proj",
        "input": "model.layers[{layer}].mlp",
        "linear": "nn.Linear",
    },
}
"""Where the FFN lives in each family's top-level transformers class."""

TENSORS = ("input", "pre_activation", "up", "hidden", "output")
"""The activations named, in the flow's order (`up` only when gated)."""


def family_for(activation: str, model: str | None = None) -> Family:
    """The model family whose FFN this configuration is: a pretrained MiniLM layer is BERT;
    gated activations (SwiGLU, GeGLU) are LLaMA's gate/up/down layout; GELU (tanh) is
    GPT-2's `gelu_new`; every other one-branch FFN (ReLU, GELU, SiLU) is read as BERT's
    (`BertConfig(hidden_act=...)` takes each of them)."""
    if model is not None:
        return "bert"
    if activation in {"swiglu", "geglu", "geglu_tanh"}:
        return "llama"
    if activation == "gelu_tanh":
        return "gpt2"
    return "bert"


NNSIGHT_SERVED = ("input", "output", "inputs")
"""Names nnsight's Envoy serves on every module: a submodule of such a name (BERT's
`BertLayer.output`) is reached as `E_<name>` in nnsight 0.8 (its `OVERLOAD_PREFIX`)."""


def nnsight_path(module: str) -> str:
    """The module's path as nnsight spells it, under the wrapped model `model`."""
    parts = module.split(".")
    return "model." + ".".join("E_" + p if p.split("[")[0] in NNSIGHT_SERVED else p for p in parts)


def _entry(tl: str, also: list[str], module: str, side: str, shape: str) -> dict[str, Any]:
    return {
        "transformer_lens": tl,
        "transformer_lens_also": also,
        "huggingface": module,
        "huggingface_reads": side,
        "nnsight": f"{nnsight_path(module)}.{side}",
        "shape": shape,
    }


def activation_names(family: Family, gated: bool) -> dict[str, dict[str, Any]]:
    """The names of each activation tensor of the FFN at `{layer}` (see `tensor_names`)."""
    f = FAMILIES[family]
    block = "blocks.{layer}"
    names = {
        "input": _entry(f"{block}.mlp.hook_in", [], f["input"], "input", "[T, d_model]"),
        "pre_activation": _entry(
            f"{block}.mlp.hook_pre",
            [f"{block}.mlp.gate.hook_out" if gated else f"{block}.mlp.in.hook_out"],
            f["gate"] if gated else f["up"],
            "output",
            "[T, d_ff]",
        ),
        "hidden": _entry(
            f"{block}.mlp.hook_post", [f"{block}.mlp.out.hook_in"], f["down"], "input", "[T, d_ff]"
        ),
        "output": _entry(
            f"{block}.hook_mlp_out",
            [f"{block}.mlp.out.hook_out"],
            f["down"],
            "output",
            "[T, d_model]",
        ),
    }
    if gated:
        names["up"] = _entry(
            f"{block}.mlp.hook_pre_linear",
            [f"{block}.mlp.in.hook_out"],
            f["up"],
            "output",
            "[T, d_ff]",
        )
    return {key: names[key] for key in TENSORS if key in names}


def weight_names(family: Family, gated: bool, bias: bool) -> dict[str, dict[str, Any]]:
    """The names of w1, b1, w2, b2 (and w_gate, b_gate) in the paper's orientation.

    `huggingface_shape` is the parameter as the library stores it: an nn.Linear keeps
    weight [out, in] (transpose it to get FFN Lab's `w1 [d_model, d_ff]`), GPT-2's Conv1D
    keeps [in, out] already. TransformerLens 4 exposes W_in / W_gate [d_model, d_ff] and
    W_out [d_ff, d_model] on `model.blocks[{layer}].mlp`.
    """
    f = FAMILIES[family]
    conv = f["linear"] == "Conv1D"
    mlp = "blocks.{layer}.mlp"
    layout = [("w1", "up", "W_in", "[d_model, d_ff]", "[d_ff, d_model]")]
    if gated:
        layout.append(("w_gate", "gate", "W_gate", "[d_model, d_ff]", "[d_ff, d_model]"))
    layout.append(("w2", "down", "W_out", "[d_ff, d_model]", "[d_model, d_ff]"))
    out: dict[str, dict[str, Any]] = {}
    for name, part, tl, shape, stored in layout:
        out[name] = {
            "transformer_lens": f"{mlp}.{tl}",
            "huggingface": f"{f[part]}.weight",
            "huggingface_shape": shape if conv else stored,
            "nnsight": f"{nnsight_path(f[part])}.weight",
            "shape": shape,
        }
        if bias:
            bias_name = "b" + name[1:]
            width = "[d_model]" if name == "w2" else "[d_ff]"
            out[bias_name] = {
                "transformer_lens": f"{mlp}.b_{'out' if name == 'w2' else 'in'}"
                if name != "w_gate"
                else None,
                "huggingface": f"{f[part]}.bias",
                "huggingface_shape": width,
                "nnsight": f"{nnsight_path(f[part])}.bias",
                "shape": width,
            }
    return out


def fill(names: Any, layer: int | None) -> Any:
    """`names` with `{layer}` replaced by `layer` in every string (left as is when None)."""
    if layer is None:
        return names
    if isinstance(names, str):
        return names.replace("{layer}", str(layer))
    if isinstance(names, list):
        return [fill(n, layer) for n in names]
    if isinstance(names, dict):
        return {k: fill(v, layer) for k, v in names.items()}
    return names


def tensor_names(
    activation: str,
    gated: bool,
    bias: bool,
    model: str | None = None,
    layer: int | None = None,
    weights: bool = False,
) -> dict[str, dict[str, Any]]:
    """`tensor_names` of a forward answer: per tensor, its names in the libraries.

    Args:
        activation, gated, bias: the configuration run (`config` of the answer).
        model, layer: the pretrained model and its layer, when one was run; `{layer}` is
            filled in then and left as a placeholder otherwise.
        weights: also name w1, b1, w2, b2 (w_gate, b_gate) (when the answer sends them).

    Returns:
        {tensor: {"transformer_lens": hook name, "transformer_lens_also": [TL 4's other
        names of the same tensor], "huggingface": module path in the family's top-level
        class, "huggingface_reads": "input" or "output" of that module, "nnsight": the
        path whose `.save()` reads it, "shape": e.g. "[T, d_ff]", "family": "bert" |
        "gpt2" | "llama"}}, for input, pre_activation, (up,) hidden and output.
    """
    family = family_for(activation, model)
    names = activation_names(family, gated)
    if weights:
        names |= weight_names(family, gated, bias)
    return {key: fill(value, layer) | {"family": family} for key, value in names.items()}
