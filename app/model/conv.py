"""The position-wise FFN as two convolutions with kernel size 1 (`torch.nn.Conv1d`).

Vaswani et al. 2017, section 3.3: "Another way of describing this is as two convolutions
with kernel size 1." A Conv1d(d_model, d_ff, 1) slides one [d_ff, d_model] kernel along
the T positions: exactly W1 applied to every token.
"""

from __future__ import annotations

from torch import Tensor, nn

from app.model import parallel
from app.model.activations import get_activation
from app.model.ffn import PositionwiseFeedForward


def _kernel(weight: Tensor) -> Tensor:
    """A contiguous [out, in] copy of a paper-orientation weight [in, out] (whatever its
    layout: a strided kernel would be reordered by the convolution on every call).

    `.T.contiguous()` on the 2-D matrix, then a size-1 axis: the same bytes as cloning the
    3-D [out, in, 1] view contiguous, 2.4x faster at LLaMA-7B's 4096 x 11008 (260 against
    630 ms here; benchmarks/README.md)."""
    return weight.T.contiguous()


def _conv_from(weight: Tensor, bias: Tensor | None, kernel: Tensor | None = None) -> nn.Conv1d:
    """Conv1d(in, out, 1) from a paper-orientation weight [in, out] (copied; `kernel`: the
    copy `_kernel(weight)` made already)."""
    fan_in, fan_out = weight.shape
    # skip_init: no random draw (the weights are replaced), so the global RNG is untouched.
    conv: nn.Conv1d = nn.utils.skip_init(  # type: ignore[no-untyped-call]
        nn.Conv1d, fan_in, fan_out, 1, bias=bias is not None
    )
    kernel = _kernel(weight) if kernel is None else kernel  # [out, in], contiguous
    conv.weight = nn.Parameter(kernel.unsqueeze(-1), requires_grad=False)
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
        w_gate = weights.w_gate
        # The copies of W1 and W_gate at once on two threads when big (app.model.parallel).
        if w_gate is None:
            self.conv_gate = None
            self.conv1 = _conv_from(weights.w1, weights.b1)
        else:
            k1, k_gate = parallel.both(
                lambda: _kernel(weights.w1), lambda: _kernel(w_gate), w_gate.numel()
            )
            self.conv1 = _conv_from(weights.w1, weights.b1, k1)
            self.conv_gate = _conv_from(w_gate, weights.b_gate, k_gate)
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
