"""`tensor_names`: the /api/forward answer and `lab.forward` name each tensor in the libraries,
and every transformers / nnsight path names a real module of the family built from a config."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app import lab
from app.analysis.tensor_names import FAMILIES, tensor_names
from app.model.pretrained import is_available

transformers = pytest.importorskip("transformers")


def test_forward_answer_names_each_tensor(client: TestClient) -> None:
    body = {"d_model": 8, "d_ff": 32, "activation": "swiglu", "num_tokens": 3}
    answer = client.post("/api/forward", json=body).json()
    names = answer["tensor_names"]
    assert list(names) == ["input", "pre_activation", "up", "hidden", "output"]
    assert names["pre_activation"] == {
        "transformer_lens": "blocks.{layer}.mlp.hook_pre",
        "transformer_lens_also": ["blocks.{layer}.mlp.gate.hook_out"],
        "huggingface": "model.layers[{layer}].mlp.gate_proj",
        "huggingface_reads": "output",
        "nnsight": "model.model.layers[{layer}].mlp.gate_proj.output",
        "shape": "[T, d_ff]",
        "family": "llama",
    }
    assert names["up"]["transformer_lens"] == "blocks.{layer}.mlp.hook_pre_linear"
    assert names["hidden"]["transformer_lens"] == "blocks.{layer}.mlp.hook_post"
    assert names["output"]["transformer_lens"] == "blocks.{layer}.hook_mlp_out"
    # the shapes named are the shapes sent
    for key, entry in names.items():
        words = {"T": 3, "d_model": 8, "d_ff": 32}
        expected = [words[w] for w in re.findall(r"\w+", entry["shape"])]
        assert answer["shapes"][key] == expected, key


def test_plain_and_gpt2_families(client: TestClient) -> None:
    relu = client.post("/api/forward", json={"activation": "relu"}).json()["tensor_names"]
    assert "up" not in relu
    assert relu["pre_activation"]["huggingface"] == "encoder.layer[{layer}].intermediate.dense"
    assert relu["output"]["nnsight"] == "model.encoder.layer[{layer}].E_output.dense.output"
    gpt2 = client.post("/api/forward", json={"activation": "gelu_tanh"}).json()["tensor_names"]
    assert gpt2["pre_activation"]["huggingface"] == "transformer.h[{layer}].mlp.c_fc"
    assert gpt2["hidden"]["huggingface_reads"] == "input"


def test_weights_are_named_when_sent(client: TestClient) -> None:
    body = {"activation": "gelu_tanh", "include_weights": True}
    names = client.post("/api/forward", json=body).json()["tensor_names"]
    assert names["w1"]["huggingface"] == "transformer.h[{layer}].mlp.c_fc.weight"
    assert names["w1"]["huggingface_shape"] == "[d_model, d_ff]"  # Conv1D: [in, out]
    assert names["w2"]["transformer_lens"] == "blocks.{layer}.mlp.W_out"
    bert = client.post("/api/forward", json={"include_weights": True}).json()["tensor_names"]
    assert bert["w1"]["huggingface_shape"] == "[d_ff, d_model]"  # nn.Linear: [out, in]


def test_lab_forward_carries_the_names() -> None:
    r = lab.forward(d_model=8, d_ff=32, activation="gelu", num_tokens=2)
    assert r.tensor_names["hidden"]["nnsight"] == (
        "model.encoder.layer[{layer}].E_output.dense.input"
    )


@pytest.mark.skipif(not is_available(), reason="MiniLM weights not installed")
def test_pretrained_layer_is_filled_in(client: TestClient) -> None:
    body = {"model": "minilm-l6", "layer": 4, "text": "a cat"}
    names = client.post("/api/forward", json=body).json()["tensor_names"]
    assert names["pre_activation"]["transformer_lens"] == "blocks.4.mlp.hook_pre"
    assert names["pre_activation"]["huggingface"] == "encoder.layer[4].intermediate.dense"


def resolve(root: Any, path: str) -> Any:
    """Follow a path such as `model.layers[1].mlp.gate_proj` from `root`."""
    obj = root
    for part in path.split("."):
        name, _, index = part.partition("[")
        obj = getattr(obj, name)
        if index:
            obj = obj[int(index.rstrip("]"))]
    return obj


def models() -> dict[str, Any]:
    small = {"num_attention_heads": 2, "num_hidden_layers": 2}
    return {
        "bert": transformers.BertModel(
            transformers.BertConfig(hidden_size=8, intermediate_size=32, **small)
        ),
        "gpt2": transformers.GPT2LMHeadModel(
            transformers.GPT2Config(n_embd=8, n_inner=32, n_head=2, n_layer=2)
        ),
        "llama": transformers.LlamaForCausalLM(
            transformers.LlamaConfig(
                hidden_size=8, intermediate_size=32, num_key_value_heads=2, **small
            )
        ),
    }


ACTIVATION = {"bert": "gelu", "gpt2": "gelu_tanh", "llama": "swiglu"}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_path_is_a_module_or_parameter_of_the_family(family: str) -> None:
    model = models()[family]
    gated = family == "llama"
    names = tensor_names(ACTIVATION[family], gated, bias=not gated, layer=1, weights=True)
    assert {entry["family"] for entry in names.values()} == {family}
    for key, entry in names.items():
        found = resolve(model, entry["huggingface"])
        assert isinstance(found, torch.nn.Module | torch.nn.Parameter), key
        if entry.get("huggingface_shape"):
            words = {"d_model": 8, "d_ff": 32}
            expected = [words[w] for w in re.findall(r"\w+", entry["huggingface_shape"])]
            assert list(found.shape) == expected, key
