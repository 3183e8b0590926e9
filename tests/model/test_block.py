"""The residual FFN sub-layer against a NumPy LayerNorm and residual reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.model.block import FFNBlock
from app.model.ffn import FFNConfig, PositionwiseFeedForward


def np_layer_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def np_ffn(x: np.ndarray, ffn: PositionwiseFeedForward) -> np.ndarray:
    w = ffn.weights()
    h = np.maximum(x @ w.w1.numpy().astype(np.float64) + w.b1.numpy(), 0.0)  # type: ignore[union-attr]
    return h @ w.w2.numpy().astype(np.float64) + w.b2.numpy()  # type: ignore[union-attr]


@pytest.fixture
def ffn() -> PositionwiseFeedForward:
    return PositionwiseFeedForward(FFNConfig(5, 13, "relu"), seed=4)


@pytest.fixture
def x() -> torch.Tensor:
    return torch.randn(4, 5, generator=torch.Generator().manual_seed(9)) * 3


def test_post_norm_matches_numpy(ffn: PositionwiseFeedForward, x: torch.Tensor) -> None:
    trace = FFNBlock(ffn, "post").trace(x)
    xn = x.numpy().astype(np.float64)
    ffn_out = np_ffn(xn, ffn)
    np.testing.assert_allclose(trace.ffn_input.numpy(), xn, atol=0)
    np.testing.assert_allclose(trace.ffn_output.numpy(), ffn_out, atol=1e-5)
    np.testing.assert_allclose(trace.residual_sum.numpy(), xn + ffn_out, atol=1e-5)
    np.testing.assert_allclose(trace.output.numpy(), np_layer_norm(xn + ffn_out), atol=1e-4)
    assert trace.steps == ("input", "ffn_output", "residual_sum", "output")
    np.testing.assert_allclose(trace.output.numpy().mean(axis=1), 0.0, atol=1e-5)


def test_pre_norm_matches_numpy(ffn: PositionwiseFeedForward, x: torch.Tensor) -> None:
    trace = FFNBlock(ffn, "pre").trace(x)
    xn = x.numpy().astype(np.float64)
    normed = np_layer_norm(xn)
    ffn_out = np_ffn(normed, ffn)
    np.testing.assert_allclose(trace.ffn_input.numpy(), normed, atol=1e-5)
    np.testing.assert_allclose(trace.ffn_output.numpy(), ffn_out, atol=1e-4)
    np.testing.assert_allclose(trace.output.numpy(), xn + ffn_out, atol=1e-4)
    assert torch.equal(trace.output, trace.residual_sum)
    assert trace.steps == ("input", "ffn_input", "ffn_output", "residual_sum")


def test_unknown_norm_names_the_supported(ffn: PositionwiseFeedForward) -> None:
    with pytest.raises(ValueError, match="post, pre"):
        FFNBlock(ffn, "sandwich")
