"""The PyTorch FFN against an independent NumPy reference, and its seeded weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from app.model import ACTIVATIONS, FFNConfig, FFNWeights, PositionwiseFeedForward, get_activation
from app.model.seeding import stream_seed
from tests import reference

ALL = list(ACTIVATIONS)
SHAPES = [
    pytest.param(5, 13, 7, id="odd-5x13-T7"),
    pytest.param(2, 4, 1, id="tiny-2x4-T1"),
    pytest.param(64, 256, 8, id="S-64x256-T8"),
]


def _np(t: torch.Tensor | None) -> np.ndarray | None:
    return None if t is None else t.detach().numpy().astype(np.float64)


@pytest.mark.parametrize("activation", ALL)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize(("d_model", "d_ff", "t"), SHAPES)
def test_trace_matches_numpy_reference(activation, bias, d_model, d_ff, t):
    model = PositionwiseFeedForward(FFNConfig(d_model, d_ff, activation, bias), seed=3)
    x = torch.randn(t, d_model, generator=torch.Generator().manual_seed(11))
    with torch.inference_mode():
        trace = model.trace(x)
    w = model.weights()
    ref = reference.ffn(
        _np(x), _np(w.w1), _np(w.b1), _np(w.w2), _np(w.b2), activation, _np(w.w_gate), _np(w.b_gate)
    )
    for name in ("pre_activation", "hidden", "output"):
        np.testing.assert_allclose(getattr(trace, name).numpy(), ref[name], atol=1e-5, rtol=1e-5)
    if get_activation(activation).gated:
        assert trace.up is not None
        np.testing.assert_allclose(trace.up.numpy(), ref["up"], atol=1e-5, rtol=1e-5)
    else:
        assert trace.up is None
    assert trace.output.shape == (t, d_model)
    assert trace.hidden.shape == (t, d_ff)


def test_batched_input_is_each_sequence_alone():
    model = PositionwiseFeedForward(FFNConfig(6, 10, "gelu"), seed=0)
    x = torch.randn(3, 4, 6, generator=torch.Generator().manual_seed(0))
    out = model(x)
    assert out.shape == (3, 4, 6)
    for b in range(3):
        torch.testing.assert_close(out[b], model(x[b]), atol=1e-6, rtol=1e-6)


def test_same_seed_same_weights_whatever_the_activation():
    by_act = {a: PositionwiseFeedForward(FFNConfig(8, 24, a), seed=42).weights() for a in ALL}
    first = by_act["relu"]
    for w in by_act.values():
        for name in ("w1", "b1", "w2", "b2"):
            assert torch.equal(getattr(w, name), getattr(first, name)), name
    assert torch.equal(by_act["swiglu"].w_gate, by_act["geglu"].w_gate)
    no_bias = FFNWeights.seeded(8, 24, 42, gated=False, bias=False)
    assert no_bias.b1 is None and no_bias.b2 is None
    assert torch.equal(no_bias.w2, first.w2)
    other = FFNWeights.seeded(8, 24, 43, gated=False, bias=True)
    assert not torch.equal(other.w1, first.w1)


def test_seeded_init_is_pytorch_default_linear_init():
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases, as nn.Linear."""
    w = FFNWeights.seeded(100, 400, 0, gated=True, bias=True)
    for name, fan_in in (("w1", 100), ("b1", 100), ("w2", 400), ("b2", 400), ("w_gate", 100)):
        t = getattr(w, name)
        bound = 1 / math.sqrt(fan_in)
        assert float(t.abs().max()) <= bound
        assert float(t.abs().max()) > 0.95 * bound  # fills the range
        assert abs(float(t.mean())) < 0.1 * bound
    # The same draw as nn.Linear.reset_parameters under the "weights" stream's seed.
    torch.manual_seed(stream_seed(7, "weights"))
    linear = torch.nn.Linear(100, 400)
    gen = FFNWeights.seeded(100, 400, 7, gated=False, bias=True)
    assert torch.equal(gen.w1, linear.weight.T)
    assert torch.equal(gen.b1, linear.bias)


def test_unknown_activation_lists_supported_names():
    with pytest.raises(
        ValueError, match="supported: relu, gelu, gelu_tanh, silu, swiglu, geglu, geglu_tanh"
    ):
        FFNConfig(4, 8, "tanh")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"d_model": 0, "d_ff": 4}, "d_model must be a positive", id="zero-d_model"),
        pytest.param({"d_model": 4, "d_ff": -1}, "d_ff must be a positive", id="neg-d_ff"),
        pytest.param({"d_model": 4, "d_ff": 4, "dropout": 1.0}, "dropout", id="dropout-1"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FFNConfig(**kwargs)


def test_weights_of_wrong_shape_or_missing_gate_raise():
    good = FFNWeights.seeded(3, 5, 0, gated=False, bias=True)
    with pytest.raises(ValueError, match="w_gate is required"):
        PositionwiseFeedForward(FFNConfig(3, 5, "swiglu"), good)
    bad = FFNWeights(good.w1.T.contiguous(), good.b1, good.w2, good.b2)
    with pytest.raises(ValueError, match=r"w1 has shape \[5, 3\], expected \[3, 5\]"):
        PositionwiseFeedForward(FFNConfig(3, 5, "relu"), bad)


def test_submitted_weights_are_used_in_paper_orientation():
    """Hand-computable: x W1 + b1 with W1 [d_model, d_ff]."""
    w = FFNWeights(
        w1=torch.tensor([[1.0, -1.0, 0.0, 2.0], [0.0, 1.0, -1.0, 1.0]]),
        b1=torch.tensor([0.0, 0.0, 1.0, -1.0]),
        w2=torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]]),
        b2=torch.tensor([0.0, 0.5]),
    )
    model = PositionwiseFeedForward(FFNConfig(2, 4, "relu"), w)
    trace = model.trace(torch.tensor([[1.0, 2.0]]))
    assert trace.pre_activation.tolist() == [[1.0, 1.0, -1.0, 3.0]]
    assert trace.hidden.tolist() == [[1.0, 1.0, 0.0, 3.0]]
    assert trace.output.tolist() == [[-2.0, 1.5]]


def test_dropout_is_identity_in_eval_and_scaled_in_train():
    config = FFNConfig(16, 64, "relu", dropout=0.5)
    model = PositionwiseFeedForward(config, seed=0)
    x = torch.randn(6, 16, generator=torch.Generator().manual_seed(1))
    model.eval()
    evaluated = model.trace(x, dropout_seed=5)
    assert evaluated.dropped is None
    reference_model = PositionwiseFeedForward(FFNConfig(16, 64, "relu"), seed=0)
    assert torch.equal(evaluated.output, reference_model(x))

    model.train()
    a = model.trace(x, dropout_seed=5)
    b = model.trace(x, dropout_seed=5)
    c = model.trace(x, dropout_seed=6)
    assert a.dropped is not None and c.dropped is not None
    assert torch.equal(a.output, b.output)  # same seed, same mask
    assert not torch.equal(a.dropped, c.dropped)
    assert not torch.equal(a.output, evaluated.output)
    assert 0.3 < float(a.dropped.float().mean()) < 0.7
    kept = torch.where(a.dropped, 0.0, a.hidden / (1 - 0.5))  # inverted dropout, by hand
    w = model.weights()
    expected = kept @ w.w2 + w.b2
    torch.testing.assert_close(a.output, expected, atol=1e-5, rtol=1e-5)
