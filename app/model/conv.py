"""The position-wise FFN as two convolutions with kernel size 1 (`torch.nn.Conv1d`).

Vaswani et al. 2017, section 3.3: "Another way of describing this is as two convolutions
with kernel size 1." A Conv1d(d_model, d_ff, 1) slides one [d_ff, d_model] kernel along
the T positions: exactly W1 applied to every token.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from app.model.activations import get_activation
from app.model.ffn import PositionwiseFeedForward


def _conv_from(weight: Tensor, bias: Tensor | None) -> nn.Conv1d:
    """Conv1d(in, out, 1) from a paper-orientation weight [in, out] (copied)."""
    fan_in, fan_out = weight.shape
    # skip_init: no random draw (the weights are replaced), so the global RNG is untouched.
    conv: nn.Conv1d = nn.utils.skip_init(  # type: ignore[no-untyped-call]
        nn.Conv1d, fan_in, fan_out, 1, bias=bias is not None
    )
    # A contiguous [out, in, 1] copy whatever the layout of `weight` (a strided kernel would
    # be reordered by the convolution on every call).
    kernel = weight.T.unsqueeze(-1).clone(memory_format=torch.contiguous_format)
    conv.weight = nn.Parameter(kernel, requires_grad=False)
    if bias is not None:
        conv.bias = nn.Parameter(bias.clone(), requires_grad=False)
    return conv


class ConvFeedForward(nn.Module):
    """The same FFN as `ffn`, computed by `nn.Conv1d(d_model, d_ff, 1)` and
    `nn.Conv1d(d_ff, d_model, 1)` (plus a gate convolution for SwiGLU/GeGLU).

    Dropout is left out: compare in eval mode.
    """

    def __init__(self, ffn: PositionwiseFeedForward) -> None:
        super().__init__()
        weights = ffn.weights()
        self.conv1 = _conv_from(weights.w1, weights.b1)
        self.conv_gate = (
            None if weights.w_gate is None else _conv_from(weights.w_gate, weights.b_gate)
        )
        self.act = get_activation(ffn.config.activation).factory()
        self.conv2 = _conv_from(weights.w2, weights.b2)
        self.requires_grad_(False)

    def forward(self, x: Tensor) -> Tensor:
        """float32 [T, d_model] -> float32 [T, d_model], via the [1, channels, T] layout."""
        channels = x.T.unsqueeze(0)  # (1, d_model, T)
        if self.conv_gate is not None:
            hidden = self.act(self.conv_gate(channels)) * self.conv1(channels)  # (1, d_ff, T)
        else:
            hidden = self.act(self.conv1(channels))  # (1, d_ff, T)
        out: Tensor = self.conv2(hidden)[0].T  # (T, d_model)
        return out
