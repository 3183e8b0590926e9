"""A stack of Transformer layers as modules: each layer an optional self-attention sub-layer
then its own position-wise FFN, each with its residual connection and LayerNorm (Vaswani et
al. 2017, section 3.1):

    post-norm:  x = LN(x + Attn(x));      x = LN(x + FFN(x))
    pre-norm:   x = x + Attn(LN(x));      x = x + FFN(LN(x))

Built and measured by `app.lab.stack` (seeded, shared or pretrained layers).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.model.bert import BertSelfAttention
from app.model.ffn import PositionwiseFeedForward


class StackError(ValueError):
    """A stack that cannot be built or run (bad size, norm, position or input shape)."""


class StackLayer(nn.Module):
    """One layer: [self-attention sub-layer], then the FFN sub-layer, each residual + LN.

    Args:
        ffn: the layer's FFN.
        attention: a module mapping [T, d_model] to the attention sub-layer's output
            (before the residual add), or None for an FFN sub-layer alone.
        norm: "post" or "pre".
        attention_norm, ffn_norm: the LayerNorms (default: `nn.LayerNorm(d_model)`).
    """

    def __init__(
        self,
        ffn: PositionwiseFeedForward,
        attention: nn.Module | None,
        norm: str,
        attention_norm: nn.Module | None = None,
        ffn_norm: nn.Module | None = None,
    ) -> None:
        super().__init__()
        d_model = ffn.config.d_model
        self.norm = norm
        self.ffn = ffn
        self.attention = attention
        self.attention_norm: nn.Module | None = None
        if attention is not None:
            self.attention_norm = attention_norm or nn.LayerNorm(d_model)
        self.ffn_norm = ffn_norm or nn.LayerNorm(d_model)
        self.requires_grad_(False)


@dataclass(frozen=True)
class LayerTrace:
    """One layer's pass (float32; T tokens).

    Attributes:
        input: [T, d_model], the residual stream entering the layer.
        attention_output: [T, d_model], Attn(x) (or Attn(LN(x))), None without attention.
        ffn_residual: [T, d_model], the residual stream entering the FFN sub-layer (x in
            ‖FFN(x)‖ / ‖x‖).
        ffn_output: [T, d_model], the FFN's output (what is added to the residual stream).
        hidden: [T, d_ff], the FFN's hidden activations.
        output: [T, d_model], the layer's output.
    """

    input: Tensor
    attention_output: Tensor | None
    ffn_residual: Tensor
    ffn_output: Tensor
    hidden: Tensor
    output: Tensor


def layer_trace(layer: StackLayer, x: Tensor) -> LayerTrace:
    attention_output = None
    residual = x
    if layer.attention is not None and layer.attention_norm is not None:
        if layer.norm == "post":
            attention_output = layer.attention(residual)  # (T, d_model)
            residual = layer.attention_norm(residual + attention_output)  # (T, d_model)
        else:
            attention_output = layer.attention(layer.attention_norm(residual))  # (T, d_model)
            residual = residual + attention_output  # (T, d_model)
    if layer.norm == "post":
        trace = layer.ffn.trace(residual)
        output = layer.ffn_norm(residual + trace.output)  # (T, d_model)
    else:
        trace = layer.ffn.trace(layer.ffn_norm(residual))
        output = residual + trace.output  # (T, d_model)
    return LayerTrace(x, attention_output, residual, trace.output, trace.hidden, output)


class Stack(nn.Module):
    """`n_layers` layers applied in order to x float32 [T, d_model] (eval mode, no grad)."""

    def __init__(
        self,
        layers: list[StackLayer],
        shared: bool,
        submitted: bool = False,
        attention_params: int = 0,
        source: str = "seeded",
    ) -> None:
        super().__init__()
        self.attention_params = attention_params
        self.source = source
        self.modules_in_order = nn.ModuleList(layers)  # registered, for .eval()/.to()
        self.layers: list[StackLayer] = list(layers)  # typed access
        self.shared = shared
        self.submitted = submitted

    def trace(self, x: Tensor) -> list[LayerTrace]:
        """Every layer's trace, in order.

        Raises:
            StackError: unless x is [T, d_model] with T >= 1.
        """
        d_model = self.layers[0].ffn.config.d_model
        if x.dim() != 2 or x.shape[1] != d_model or x.shape[0] < 1:
            raise StackError(f"x must be [T, {d_model}] with T >= 1, got {list(x.shape)}")
        traces: list[LayerTrace] = []
        with torch.inference_mode():
            for layer in self.layers:
                trace = layer_trace(layer, x)
                traces.append(trace)
                x = trace.output
        return traces


class BertAttentionOnly(nn.Module):
    """A BERT layer's attention sub-layer without its residual add and LayerNorm:
    softmax(q k^T / sqrt(d_head)) v W_o + b_o (`app.model.bert.BertSelfAttention.attend`, the
    call its `forward` makes before computing LayerNorm(x + this))."""

    def __init__(self, attention: BertSelfAttention) -> None:
        super().__init__()
        self.inner = attention

    def forward(self, x: Tensor) -> Tensor:
        """x float32 [T, d_model] -> [T, d_model]."""
        return self.inner.attend(x)
