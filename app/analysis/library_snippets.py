"""Copyable code that reads the FFN's tensors in TransformerLens, transformers and nnsight.

Built from the table of `app.analysis.tensor_names`, so the code and the names never part.
Each snippet starts from a `model` already loaded (the first comment says how) and the text
(`text`, or `inputs` from the model's tokenizer for transformers), and leaves the FFN's
tensors of batch row 0 in variables named as FFN Lab names them: `x` (the input, FFN Lab's
`input`), `pre_activation`, `up` (gated only), `hidden` and `output`. tests/names/ runs every
snippet on transformers modules built from configs and checks each variable against
FFN Lab's own forward pass.
"""

from __future__ import annotations

from app.analysis.tensor_names import FAMILIES, Family, activation_names, fill

LIBRARIES = ("transformer_lens", "huggingface", "nnsight")

LOAD = {
    "transformer_lens": (
        "# TransformerLens 4: from transformer_lens.model_bridge import TransformerBridge\n"
        '# model = TransformerBridge.boot_transformers("{name}")'
    ),
    "huggingface": (
        '# transformers: model = AutoModel{auto}.from_pretrained("{name}").eval()\n'
        '# inputs = tokenizer(text, return_tensors="pt")'
    ),
    "nnsight": ('# nnsight: from nnsight import LanguageModel\n# model = LanguageModel("{name}")'),
}

EXAMPLE_MODEL = {
    "bert": ("sentence-transformers/all-MiniLM-L6-v2", ""),
    "gpt2": ("openai-community/gpt2", "ForCausalLM"),
    "llama": ("meta-llama/Llama-2-7b-hf", "ForCausalLM"),
}
"""A model of each family to name in the first comment, and its AutoModel class suffix."""


def _variable(key: str) -> str:
    return "x" if key == "input" else key


def transformer_lens(family: Family, gated: bool, layer: int) -> str:
    """TransformerLens 4: one `run_with_cache`, each tensor read by its hook name."""
    names = activation_names(family, gated)
    lines = [
        f"layer = {layer}",
        "_, cache = model.run_with_cache(text)",
    ]
    for key, entry in names.items():
        hook = entry["transformer_lens"]  # "{layer}" stays: the snippet's f-string fills it
        lines.append(f'{_variable(key)} = cache[f"{hook}"][0]  # {entry["shape"]}')
    return "\n".join(lines)


def huggingface(family: Family, gated: bool, layer: int) -> str:
    """transformers alone: PyTorch forward hooks on the FFN's modules, removed afterwards."""
    names = activation_names(family, gated)
    lines = [
        "import torch",
        "",
        f"layer = {layer}",
        "seen = {}",
        "",
        "",
        "def keep(name, side):",
        "    def hook(module, args, output):",
        '        seen[name] = (args[0] if side == "input" else output)[0].detach()',
        "",
        "    return hook",
        "",
        "",
        "hooks = [",
    ]
    for key, entry in names.items():
        path = entry["huggingface"].replace("[{layer}]", "[layer]")
        side = entry["huggingface_reads"]
        lines.append(f'    model.{path}.register_forward_hook(keep("{key}", "{side}")),')
    lines += [
        "]",
        "with torch.no_grad():",
        "    model(**inputs)",
        "for h in hooks:",
        "    h.remove()",
    ]
    for key, entry in names.items():
        lines.append(f'{_variable(key)} = seen["{key}"]  # {entry["shape"]}')
    return "\n".join(lines)


def nnsight(family: Family, gated: bool, layer: int) -> str:
    """nnsight: each tensor `.save()`d inside one `model.trace(text)`."""
    names = activation_names(family, gated)
    # LanguageModel wraps models that generate text; an encoder (BERT) is wrapped by NNsight
    # and traced on the tokenizer's inputs
    trace = "model.trace(**inputs)" if family == "bert" else "model.trace(text)"
    lines = [f"layer = {layer}", f"with {trace}:"]
    for key, entry in names.items():
        path = entry["nnsight"].replace("[{layer}]", "[layer]")
        lines.append(f"    {_variable(key)} = {path}[0].save()  # {entry['shape']}")
    return "\n".join(lines)


NNSIGHT_ENCODER = (
    "# nnsight: from nnsight import NNsight\n"
    '# model = NNsight(AutoModel.from_pretrained("{name}"))\n'
    '# inputs = tokenizer(text, return_tensors="pt")'
)


def snippets(family: Family, gated: bool, layer: int = 0) -> dict[str, str]:
    """{library: code} for `family` at `layer`, each opened by how to load such a model."""
    name, auto = EXAMPLE_MODEL[family]
    load = LOAD | ({"nnsight": NNSIGHT_ENCODER} if family == "bert" else {})
    names = {library: name for library in LIBRARIES}
    if family == "bert":  # TransformerBridge boots BERT as BertForMaskedLM
        names["transformer_lens"] = "google-bert/bert-base-uncased"
    build = {"transformer_lens": transformer_lens, "huggingface": huggingface, "nnsight": nnsight}
    return {
        library: load[library].format(name=names[library], auto=auto)
        + "\n"
        + build[library](family, gated, layer)
        for library in LIBRARIES
    }


def all_snippets(layer: int = 0) -> dict[str, dict[str, object]]:
    """Every family's names and code at `layer`, for the page's "Read this in your library"
    panel (GET /api/tensor-names): {family: {"label", "class", "gated", "tensors", "code"}}."""
    out: dict[str, dict[str, object]] = {}
    for family, places in FAMILIES.items():
        gated = family == "llama"
        out[family] = {
            "label": places["label"],
            "class": places["class"],
            "gated": gated,
            "tensors": fill(activation_names(family, gated), None),
            "code": snippets(family, gated, layer),
        }
    return out
