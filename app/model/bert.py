"""A small BERT encoder in plain torch, enough to run all-MiniLM-L6-v2 to any layer's FFN.

Devlin et al. 2019, "BERT"; the encoder layer is Vaswani et al. 2017's post-LN block:
    a = LayerNorm(x + Attention(x))            (attention.output.LayerNorm)
    y = LayerNorm(a + FFN(a))                  (output.LayerNorm)
with FFN(a) = GELU(a W1 + b1) W2 + b2 run by our own `PositionwiseFeedForward`.

Weights come in Hugging Face's tensor names without the `bert.` prefix
(`encoder.layer.0.intermediate.dense.weight [d_ff, d_model]`, nn.Linear's [out, in]);
`BertLayer.__init__` turns the FFN's into the paper's orientation (w1 = weight.T).
Only what a single unpadded sequence needs: no attention mask, token type 0, eval mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional

from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward


@dataclass(frozen=True)
class BertConfig:
    """The shape of a BERT encoder (the fields of Hugging Face's `config.json`).

    Raises:
        ValueError: when hidden_size is not a multiple of num_attention_heads, or an
            activation other than GELU (erf) is asked for.
    """

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not a multiple of "
                f"num_attention_heads {self.num_attention_heads}"
            )
        if self.hidden_act != "gelu":
            raise ValueError(f"hidden_act {self.hidden_act!r} is not supported; supported: gelu")


@dataclass(frozen=True)
class LayerTrace:
    """What one encoder layer saw and made, for a sequence of T tokens (float32).

    Attributes:
        layer_input: [T, d_model], the hidden states entering the layer.
        ffn_input: [T, d_model], LayerNorm(x + Attention(x)): the FFN's input.
        ffn_output: [T, d_model], FFN(ffn_input) = output.dense(GELU(intermediate.dense(.))).
        layer_output: [T, d_model], LayerNorm(ffn_input + ffn_output).
    """

    layer_input: Tensor
    ffn_input: Tensor
    ffn_output: Tensor
    layer_output: Tensor


def _linear(state: dict[str, Tensor], prefix: str) -> nn.Linear:
    """An nn.Linear holding `prefix.weight` [out, in] and `prefix.bias` (no copy)."""
    weight = state[f"{prefix}.weight"]
    linear = nn.Linear(weight.shape[1], weight.shape[0], device="meta")  # no init, no memory
    linear.weight = nn.Parameter(weight, requires_grad=False)
    linear.bias = nn.Parameter(state[f"{prefix}.bias"], requires_grad=False)
    return linear


def _layer_norm(state: dict[str, Tensor], prefix: str, eps: float) -> nn.LayerNorm:
    weight = state[f"{prefix}.weight"]
    norm = nn.LayerNorm(weight.shape[0], eps=eps)
    norm.weight = nn.Parameter(weight, requires_grad=False)
    norm.bias = nn.Parameter(state[f"{prefix}.bias"], requires_grad=False)
    return norm


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention plus its output projection and LayerNorm.

    [T, d_model] -> [T, d_model]; mixes positions (unlike the FFN). Vaswani et al. 2017, 3.2.
    """

    def __init__(self, config: BertConfig, state: dict[str, Tensor], prefix: str) -> None:
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.query = _linear(state, f"{prefix}.self.query")
        self.key = _linear(state, f"{prefix}.self.key")
        self.value = _linear(state, f"{prefix}.self.value")
        self.dense = _linear(state, f"{prefix}.output.dense")
        self.norm = _layer_norm(state, f"{prefix}.output.LayerNorm", config.layer_norm_eps)

    def _split(self, x: Tensor) -> Tensor:
        t = x.shape[0]
        return x.view(t, self.heads, self.head_dim).transpose(0, 1)  # (heads, T, head_dim)

    def attend(self, x: Tensor) -> Tensor:
        """The sub-layer before its residual add and LayerNorm: softmax(q k^T / sqrt(d_head))
        v W_o + b_o; x float32 [T, d_model] -> [T, d_model]."""
        q = self._split(self.query(x))  # (heads, T, head_dim)
        k = self._split(self.key(x))  # (heads, T, head_dim)
        v = self._split(self.value(x))  # (heads, T, head_dim)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)  # (heads, T, T)
        weights = scores.softmax(dim=-1)  # (heads, T, T)
        context = (weights @ v).transpose(0, 1).reshape(x.shape)  # (T, d_model)
        out: Tensor = self.dense(context)  # (T, d_model)
        return out

    def forward(self, x: Tensor) -> Tensor:
        """LayerNorm(x + softmax(q k^T / sqrt(d_head)) v W_o + b_o); x float32 [T, d_model]."""
        out: Tensor = self.norm(x + self.attend(x))  # (T, d_model)
        return out


class BertLayer(nn.Module):
    """One encoder layer; its FFN is our `PositionwiseFeedForward` with the real weights."""

    def __init__(self, config: BertConfig, state: dict[str, Tensor], index: int) -> None:
        super().__init__()
        prefix = f"encoder.layer.{index}"
        self.attention = BertSelfAttention(config, state, f"{prefix}.attention")
        self.ffn = PositionwiseFeedForward(
            FFNConfig(config.hidden_size, config.intermediate_size, activation="gelu"),
            ffn_weights(state, index),
        )
        self.norm = _layer_norm(state, f"{prefix}.output.LayerNorm", config.layer_norm_eps)

    def trace(self, x: Tensor) -> LayerTrace:
        """Run the layer on x [T, d_model] and keep the FFN's input and output."""
        ffn_input = self.attention(x)  # (T, d_model)
        ffn_output = self.ffn(ffn_input)  # (T, d_model)
        return LayerTrace(x, ffn_input, ffn_output, self.norm(ffn_input + ffn_output))

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> [T, d_model]."""
        return self.trace(x).layer_output


def ffn_weights(state: dict[str, Tensor], index: int) -> FFNWeights:
    """Layer `index`'s FFN weights in the paper's orientation.

    BERT stores `intermediate.dense.weight` as [d_ff, d_model] (nn.Linear's [out, in]), so
    w1 = its transpose [d_model, d_ff]; likewise w2 = `output.dense.weight`.T [d_ff, d_model].
    """
    prefix = f"encoder.layer.{index}"
    return FFNWeights(
        w1=state[f"{prefix}.intermediate.dense.weight"].T,
        b1=state[f"{prefix}.intermediate.dense.bias"],
        w2=state[f"{prefix}.output.dense.weight"].T,
        b2=state[f"{prefix}.output.dense.bias"],
    )


class BertEncoder(nn.Module):
    """Embeddings + `num_hidden_layers` encoder layers, in eval mode, without gradients.

    Args:
        config: the encoder's shape.
        state: the tensors by Hugging Face name (see the module docstring).

    Raises:
        KeyError: when a tensor is missing from `state`.
    """

    def __init__(self, config: BertConfig, state: dict[str, Tensor]) -> None:
        super().__init__()
        self.config = config
        self.word_embeddings = state["embeddings.word_embeddings.weight"]  # (vocab, d_model)
        self.position_embeddings = state["embeddings.position_embeddings.weight"]
        self.token_type_embeddings = state["embeddings.token_type_embeddings.weight"]
        self.embedding_norm = _layer_norm(state, "embeddings.LayerNorm", config.layer_norm_eps)
        self.blocks: tuple[BertLayer, ...] = tuple(
            BertLayer(config, state, i) for i in range(config.num_hidden_layers)
        )
        self.layers = nn.ModuleList(self.blocks)  # registered, for .eval() and printing
        self.requires_grad_(False)
        self.eval()

    def embed(self, input_ids: Tensor) -> Tensor:
        """int64 [T] -> float32 [T, d_model]: LayerNorm(word + position + token type 0)."""
        positions = torch.arange(input_ids.shape[0])
        x = (
            functional.embedding(input_ids, self.word_embeddings)
            + functional.embedding(positions, self.position_embeddings)
            + self.token_type_embeddings[0]
        )  # (T, d_model)
        out: Tensor = self.embedding_norm(x)
        return out

    def run_to(self, input_ids: Tensor, layer: int) -> LayerTrace:
        """Run layers 0..`layer` on one sequence; returns the trace of layer `layer`.

        Args:
            input_ids: int64 [T], WordPiece ids with [CLS] and [SEP].
            layer: 0-based layer index.

        Raises:
            ValueError: for a layer outside [0, num_hidden_layers).
        """
        self._check_layer(layer)
        with torch.inference_mode():
            x = self.embed(input_ids)
            for block in self.blocks[:layer]:
                x = block(x)
            return self.blocks[layer].trace(x)

    def hidden_states(self, input_ids: Tensor) -> list[LayerTrace]:
        """Traces of every layer for one sequence (one pass)."""
        traces: list[LayerTrace] = []
        with torch.inference_mode():
            x = self.embed(input_ids)
            for block in self.blocks:
                trace = block.trace(x)
                traces.append(trace)
                x = trace.layer_output
        return traces

    def layer(self, index: int) -> BertLayer:
        """Layer `index` (see `run_to` for errors)."""
        self._check_layer(index)
        return self.blocks[index]

    def _check_layer(self, layer: int) -> None:
        n = self.config.num_hidden_layers
        if not 0 <= layer < n:
            raise ValueError(f"layer must be in [0, {n - 1}], got {layer!r}")
