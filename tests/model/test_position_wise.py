"""Position-wise independence, bit for bit, for every configuration (hypothesis)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import ACTIVATIONS, FFNConfig, PositionwiseFeedForward


@st.composite
def configurations(draw):  # type: ignore[no-untyped-def]
    d_model = draw(st.integers(1, 96))
    d_ff = draw(st.integers(1, 384))
    t = draw(st.integers(1, 24))
    activation = draw(st.sampled_from(list(ACTIVATIONS)))
    bias = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    position = draw(st.integers(0, t - 1))
    scale = draw(st.floats(1e-6, 1e3, allow_nan=False))
    return d_model, d_ff, t, activation, bias, seed, position, scale


@settings(max_examples=150, deadline=None)
@given(configurations())
def test_nudging_one_token_changes_no_other_output_row(cfg):  # type: ignore[no-untyped-def]
    d_model, d_ff, t, activation, bias, seed, position, scale = cfg
    model = PositionwiseFeedForward(FFNConfig(d_model, d_ff, activation, bias), seed=seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(t, d_model, generator=gen)
    nudged = x.clone()
    nudged[position] += scale * torch.randn(d_model, generator=gen)
    with torch.inference_mode():
        before = model(x)
        after = model(nudged)  # a separate call of the same shape
    others = [i for i in range(t) if i != position]
    assert torch.equal(before[others], after[others])
