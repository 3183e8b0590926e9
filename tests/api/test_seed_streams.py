"""Every random stream has its own generator: no correlation between W1 and the tokens.

With one bare-integer seed per generator, equal seeds made token t anti-correlated with
column t of W1: z[t, t] of the pre-activation was a -3.8 sigma outlier at 128 -> 256 (-7.7
at 512 -> 2048; `python -m benchmarks.seed_correlation`). Run against that legacy seeding,
`test_diagonal_of_the_pre_activation_is_like_any_other_entry` fails on its first assertion.
"""

from __future__ import annotations

import hashlib

import pytest
import torch

from app.api.schemas.forward import ForwardRequest
from app.lab.forward import input_tokens, random_direction
from app.model import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.model.attention import AttentionWeights
from app.model.seeding import stream_seed

D_MODEL, D_FF, T = 128, 256, 16
PAIRS = (
    [(s, s) for s in range(12)]  # equal seeds: the default 0/0 and every equal pair
    + [(s, s + 1) for s in range(6)]
    + [(2 * s + 3, s) for s in range(6)]
)


def _z(seed: int, input_seed: int) -> torch.Tensor:
    """The pre-activation x W1 + b1 the server computes, standardised by its own mean/std."""
    w = FFNWeights.seeded(D_MODEL, D_FF, seed, gated=False, bias=True)
    x = input_tokens(
        ForwardRequest(d_model=D_MODEL, d_ff=D_FF, num_tokens=T, input_seed=input_seed)
    )
    assert w.b1 is not None
    z = (x @ w.w1 + w.b1).double()
    return (z - z.mean()) / z.std()


def test_diagonal_of_the_pre_activation_is_like_any_other_entry():
    diagonal, others = [], []
    for seed, input_seed in PAIRS:
        z = _z(seed, input_seed)
        on = torch.zeros_like(z, dtype=torch.bool)
        on[torch.arange(T), torch.arange(T)] = True
        diagonal.append(z[on])
        others.append(z[~on])
    d, o = torch.cat(diagonal), torch.cat(others)
    # 384 diagonal samples: the standard error of the mean is 0.05; legacy seeding gave -3.8.
    assert abs(float(d.mean()) - float(o.mean())) < 0.3
    assert 0.8 < float(d.std()) / float(o.std()) < 1.2
    # and the equal pairs alone (the default 0/0 is one of them)
    equal = torch.cat([diagonal[i] for i, (s, i_s) in enumerate(PAIRS) if s == i_s])
    assert abs(float(equal.mean())) < 0.4


def test_nudge_direction_is_independent_of_the_tokens():
    """Equal direction_seed and input_seed used to give a nudge parallel to token 0."""
    cosines = []
    for seed in range(20):
        x = input_tokens(ForwardRequest(d_model=64, d_ff=64, num_tokens=1, input_seed=seed))
        nudge = random_direction(64, 1.0, seed)
        cosines.append(float(torch.nn.functional.cosine_similarity(x[0], nudge, dim=0)))
    assert max(abs(c) for c in cosines) < 0.6  # parallel would be 1.0; N(0, 1/64) here


def test_attention_weights_are_not_the_ffn_weights():
    ffn = FFNWeights.seeded(16, 16, 5, gated=False, bias=True)
    attention = AttentionWeights.seeded(16, 5, bias=True)
    assert not torch.equal(ffn.w1, attention.w_q)


def test_dropout_mask_follows_its_own_stream():
    config = FFNConfig(8, 64, "relu", dropout=0.5)
    model = PositionwiseFeedForward(config, seed=3).train()
    x = torch.ones(4, 8)
    with torch.inference_mode():
        dropped = model.trace(x, dropout_seed=3).dropped
    gen = torch.Generator().manual_seed(stream_seed(3, "dropout"))
    assert dropped is not None
    assert torch.equal(dropped, torch.rand(4, 64, generator=gen) < 0.5)


@pytest.mark.parametrize("stream", ["weights", "inputs", "dropout", "attention", "nudge"])
def test_stream_seed_is_the_documented_sha256_rule(stream: str):
    """The rule the exported PyTorch program and the README carry, recomputed here."""
    digest = hashlib.sha256(f"ffn-lab/{stream}/42".encode()).digest()
    assert stream_seed(42, stream) == int.from_bytes(digest[:8], "little") & (2**63 - 1)
    w = FFNWeights.seeded(4, 8, 42, gated=False, bias=True)
    if stream == "weights":
        torch.manual_seed(stream_seed(42, "weights"))
        assert torch.equal(w.w1, torch.nn.Linear(4, 8).weight.T)


def test_switching_activation_or_bias_never_rerolls_the_shared_weights():
    plain = FFNWeights.seeded(8, 16, 9, gated=False, bias=True)
    for gated in (False, True):
        for bias in (False, True):
            other = FFNWeights.seeded(8, 16, 9, gated=gated, bias=bias)
            assert torch.equal(plain.w1, other.w1)
            assert torch.equal(plain.w2, other.w2)
            if bias:
                assert other.b1 is not None and plain.b1 is not None
                assert torch.equal(plain.b1, other.b1)
