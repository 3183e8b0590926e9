"""lab.from_module: every known family's FFN, run by FFN Lab, equals the module's own forward."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")

from transformers.models.bert.modeling_bert import BertLayer  # noqa: E402
from transformers.models.gpt2.modeling_gpt2 import GPT2MLP  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaMLP  # noqa: E402
from transformers.models.t5.modeling_t5 import (  # noqa: E402
    T5DenseActDense,
    T5DenseGatedActDense,
)

from app.lab.from_module import from_module  # noqa: E402
from app.model.activations import ACTIVATIONS  # noqa: E402
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward  # noqa: E402

D_MODEL, D_FF, T = 8, 32, 5


def _randomise(module: nn.Module, seed: int = 0) -> nn.Module:
    """Non-trivial weights and biases (some inits start biases at zero)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.5)
    return module.eval()


def _ours(found: dict[str, Any], x: torch.Tensor) -> np.ndarray:
    """FFN Lab's FFN on the extracted weights."""
    from app import lab

    if hasattr(lab, "forward"):
        result = lab.forward(**found, tokens=x.numpy(), display="full")
        return np.asarray(result["output"])
    config = FFNConfig(found["d_model"], found["d_ff"], found["activation"], found["bias"])
    tensors = {k: torch.from_numpy(v) for k, v in found["weights"].items()}
    weights = FFNWeights(**({"b1": None, "b2": None} | tensors))
    with torch.inference_mode():
        return PositionwiseFeedForward(config, weights)(x).numpy()


def _tokens() -> torch.Tensor:
    return torch.randn(T, D_MODEL, generator=torch.Generator().manual_seed(1))


def _check(found: dict[str, Any], reference: torch.Tensor, activation: str, bias: bool) -> None:
    assert found["activation"] == activation
    assert found["bias"] is bias
    assert (found["d_model"], found["d_ff"]) == (D_MODEL, D_FF)
    assert found["weights"]["w1"].shape == (D_MODEL, D_FF)
    assert found["weights"]["w2"].shape == (D_FF, D_MODEL)
    np.testing.assert_allclose(_ours(found, _tokens()), reference.numpy(), atol=1e-5, rtol=0)


def test_bert_layer_and_pair() -> None:
    config = transformers.BertConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_attention_heads=2
    )
    layer = _randomise(BertLayer(config))
    x = _tokens()
    with torch.no_grad():  # the FFN inside BertOutput: dense(act(dense(x))), before LayerNorm
        reference = layer.output.dense(layer.intermediate(x))
    _check(from_module(layer), reference, "gelu", True)
    _check(from_module(layer.intermediate, layer.output), reference, "gelu", True)


def test_gpt2_mlp_conv1d_in_out() -> None:
    config = transformers.GPT2Config(n_embd=D_MODEL, n_layer=1, n_head=2)
    mlp = _randomise(GPT2MLP(D_FF, config))
    with torch.no_grad():
        reference = mlp(_tokens())
    _check(from_module(mlp), reference, "gelu_tanh", True)


def test_llama_mlp_gate_up_down() -> None:
    config = transformers.LlamaConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_attention_heads=2, num_key_value_heads=2
    )
    mlp = _randomise(LlamaMLP(config))
    with torch.no_grad():
        reference = mlp(_tokens())
    found = from_module(mlp)
    _check(found, reference, "swiglu", False)
    np.testing.assert_array_equal(
        found["weights"]["w_gate"], mlp.gate_proj.weight.detach().T.numpy()
    )
    np.testing.assert_array_equal(found["weights"]["w1"], mlp.up_proj.weight.detach().T.numpy())


class MetaFeedForward(nn.Module):
    """Meta's LLaMA reference FeedForward: w2(silu(w1 x) * w3 x)."""

    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Linear(D_MODEL, D_FF, bias=False)
        self.w2 = nn.Linear(D_FF, D_MODEL, bias=False)
        self.w3 = nn.Linear(D_MODEL, D_FF, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


def test_meta_w1_w3_w2() -> None:
    module = _randomise(MetaFeedForward())
    with torch.no_grad():
        reference = module(_tokens())
    _check(from_module(module), reference, "swiglu", False)


def test_t5_dense_act_dense() -> None:
    config = transformers.T5Config(d_model=D_MODEL, d_ff=D_FF, num_heads=2, d_kv=4)
    module = _randomise(T5DenseActDense(config))
    with torch.no_grad():
        reference = module(_tokens())
    _check(from_module(module), reference, "relu", False)


@pytest.mark.skipif("geglu_tanh" not in ACTIVATIONS, reason="geglu_tanh not in the registry")
def test_t5_gated_gelu_new() -> None:
    config = transformers.T5Config(
        d_model=D_MODEL, d_ff=D_FF, num_heads=2, d_kv=4, feed_forward_proj="gated-gelu"
    )
    module = _randomise(T5DenseGatedActDense(config))
    with torch.no_grad():
        reference = module(_tokens())
    _check(from_module(module), reference, "geglu_tanh", False)


@pytest.mark.parametrize(("activation", "bias"), [("relu", True), ("swiglu", False)])
def test_our_positionwise_feed_forward(activation: str, bias: bool) -> None:
    module = PositionwiseFeedForward(FFNConfig(D_MODEL, D_FF, activation, bias), seed=3)
    with torch.inference_mode():
        reference = module(_tokens())
    _check(from_module(module), reference, activation, bias)


def test_unknown_module_names_the_families() -> None:
    with pytest.raises(ValueError, match="GPT2MLP") as info:
        from_module(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4)))
    assert "Sequential" in str(info.value)
    assert "LlamaMLP" in str(info.value)


def test_unknown_activation_is_named() -> None:
    config = transformers.GPT2Config(n_embd=D_MODEL, n_layer=1, n_head=2)
    mlp = GPT2MLP(D_FF, config)
    mlp.act = nn.Tanh()
    with pytest.raises(ValueError, match="Tanh computes none"):
        from_module(mlp)


@pytest.mark.parametrize("call", ["weights", "unpacked"])
def test_forward_takes_the_module_as_weights_or_unpacked(call: str) -> None:
    """`lab.forward(weights=lab.from_module(m))` and `lab.forward(**lab.from_module(m))` run
    the same FFN: the module's own output, for a BERT layer given as its two halves."""
    from app import lab

    config = transformers.BertConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_attention_heads=2
    )
    layer = _randomise(BertLayer(config))
    x = _tokens()
    with torch.no_grad():
        reference = layer.output.dense(layer.intermediate(x)).numpy()
    found = lab.from_module(layer.intermediate, layer.output)
    if call == "weights":
        result = lab.forward(weights=found, tokens=x)
        nudged = lab.perturb(weights=found, tokens=x, position=1)
    else:
        result = lab.forward(**found, tokens=x)
        nudged = lab.perturb(**found, tokens=x, position=1)
    np.testing.assert_allclose(result["output"], reference, atol=1e-5, rtol=0)
    assert result["config"]["activation"] == "gelu"
    assert nudged["changed_positions"] == [1]


def test_a_keyword_that_contradicts_the_module_is_refused() -> None:
    from app import lab

    mlp = _randomise(
        LlamaMLP(
            transformers.LlamaConfig(
                hidden_size=D_MODEL,
                intermediate_size=D_FF,
                num_attention_heads=2,
                num_key_value_heads=2,
            )
        )
    )
    found = lab.from_module(mlp)
    with pytest.raises(ValueError, match="activation = 'relu' contradicts the module's"):
        lab.forward(weights=found, activation="relu")
    same = lab.forward(weights=found, activation="swiglu", d_ff=D_FF, num_tokens=2)
    assert same["config"]["gated"] is True
