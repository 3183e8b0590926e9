"""The FFN equals two kernel-size-1 convolutions (Vaswani et al. 2017, section 3.3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.model.conv import ConvFeedForward
from app.model.ffn import FFNConfig, PositionwiseFeedForward


def np_conv1d_k1(x_ct: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Conv1d with kernel size 1 by its definition: out[o, t] = Σ_c w[o, c, 0] x[c, t] + b[o]."""
    channels_out = weight.shape[0]
    out = np.zeros((channels_out, x_ct.shape[1]))
    for t in range(x_ct.shape[1]):
        for o in range(channels_out):
            out[o, t] = float(np.dot(weight[o, :, 0], x_ct[:, t]))
            if bias is not None:
                out[o, t] += bias[o]
    return out


@pytest.mark.parametrize(
    "activation", ["relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu", "geglu_tanh"]
)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_equals_linear_ffn(activation: str, bias: bool) -> None:
    ffn = PositionwiseFeedForward(FFNConfig(5, 13, activation, bias), seed=2)
    conv = ConvFeedForward(ffn)
    x = torch.randn(7, 5, generator=torch.Generator().manual_seed(3))
    assert conv.conv1.weight.shape == (13, 5, 1)
    assert conv.conv2.weight.shape == (5, 13, 1)
    assert (conv.conv_gate is not None) == ffn.config.gated
    torch.testing.assert_close(conv(x), ffn(x), atol=1e-5, rtol=1e-5)


def test_conv_layer_matches_numpy_definition() -> None:
    ffn = PositionwiseFeedForward(FFNConfig(4, 6, "relu"), seed=1)
    conv = ConvFeedForward(ffn)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    got = conv.conv1(x.T.unsqueeze(0))[0].detach().numpy()
    ref = np_conv1d_k1(
        x.T.numpy().astype(np.float64),
        conv.conv1.weight.detach().numpy(),
        conv.conv1.bias.detach().numpy(),  # type: ignore[union-attr]
    )
    np.testing.assert_allclose(got, ref, atol=1e-5)
    w = ffn.weights()
    np.testing.assert_allclose(
        got.T,
        x.numpy() @ w.w1.numpy() + w.b1.numpy(),  # type: ignore[union-attr]
        atol=1e-5,
    )
