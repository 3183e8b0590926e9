"""GeGLU with the tanh GELU: T5 v1.1 / Flan-T5's `gated-gelu` FFN.

Checked against transformers' own `T5DenseGatedActDense` (built offline from a T5Config,
random weights) and against the NumPy reference; GeGLU with the erf GELU must NOT match it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.model import FFNConfig, FFNWeights, PositionwiseFeedForward, get_activation
from tests import reference

transformers = pytest.importorskip("transformers")


def _t5_ffn(d_model: int, d_ff: int) -> torch.nn.Module:
    from transformers.models.t5.modeling_t5 import T5DenseGatedActDense

    config = transformers.T5Config(
        d_model=d_model, d_ff=d_ff, feed_forward_proj="gated-gelu", dropout_rate=0.0
    )
    torch.manual_seed(0)
    module = T5DenseGatedActDense(config).eval()
    with torch.no_grad():  # T5's init is tiny/zero-ish in places: give every weight scale
        for p in module.parameters():
            p.normal_(0.0, 0.7)
    return module


def _ours(
    module: torch.nn.Module, activation: str, d_model: int, d_ff: int
) -> PositionwiseFeedForward:
    weights = FFNWeights.from_named(
        {
            "w_gate": module.wi_0.weight.detach().T.clone(),  # act(x wi_0)
            "w1": module.wi_1.weight.detach().T.clone(),  # the linear "up"
            "w2": module.wo.weight.detach().T.clone(),
        }
    )
    return PositionwiseFeedForward(FFNConfig(d_model, d_ff, activation, bias=False), weights).eval()


def test_geglu_tanh_equals_t5_gated_gelu():
    d_model, d_ff = 16, 48
    t5 = _t5_ffn(d_model, d_ff)
    x = torch.randn(7, d_model, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        expected = t5(x)
        ours = _ours(t5, "geglu_tanh", d_model, d_ff)(x)
        erf = _ours(t5, "geglu", d_model, d_ff)(x)
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=1e-5)
    assert float((erf - expected).abs().max()) > 1e-4  # the erf GELU is a different FFN


def test_geglu_tanh_against_numpy():
    config = FFNConfig(6, 20, "geglu_tanh", bias=True)
    model = PositionwiseFeedForward(config, seed=3).eval()
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(5)) * 3
    with torch.inference_mode():
        trace = model.trace(x)
    w = {k: v.double().numpy() for k, v in model.weights().named().items()}
    ref = reference.ffn(x.double().numpy(), activation="geglu_tanh", **w)
    for name in ("pre_activation", "up", "hidden", "output"):
        np.testing.assert_allclose(getattr(trace, name).numpy(), ref[name], atol=1e-5, err_msg=name)
    spec = get_activation("geglu_tanh")
    assert spec.gated and "tanh" in spec.formula and not spec.exact_zeros
