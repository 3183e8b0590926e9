"""Parameter and FLOP budget of FFN vs attention, checked against counts by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.analysis import param_counts
from app.analysis.budget import (
    attention_flop_count,
    attention_param_counts,
    block_budget,
    llama_d_ff,
    matched_gated_d_ff,
    token_ladder,
)
from app.model.ffn import FFNConfig


@pytest.mark.parametrize("d_model", [4, 64, 512, 4096])
def test_ffn_is_8_d2_and_attention_4_d2_without_biases(d_model: int) -> None:
    ffn = param_counts(FFNConfig(d_model, 4 * d_model, "relu", bias=False))["total"]
    attn = attention_param_counts(d_model, bias=False)["total"]
    assert ffn == 8 * d_model**2
    assert attn == 4 * d_model**2


def test_attention_biases_are_listed() -> None:
    counts = attention_param_counts(512, bias=True)
    assert counts["b_q"] == 512 and counts["w_o"] == 512 * 512
    assert counts["total"] == 4 * 512 * 512 + 4 * 512


def test_attention_flops_by_matmul_shapes() -> None:
    t, d, h = 7, 12, 3
    dk = d // h
    projections = 4 * (2 * t * d * d)  # [t, d] @ [d, d], four times
    scores = h * (2 * t * t * dk)  # per head [t, dk] @ [dk, t]
    mix = h * (2 * t * t * dk)  # per head [t, t] @ [t, dk]
    flops = attention_flop_count(d, t, h, bias=True)
    assert flops.projections == projections
    assert flops.scores == scores
    assert flops.mix == mix
    assert flops.softmax == h * t * t
    assert flops.total == projections + scores + mix + h * t * t + 4 * t * d


@pytest.mark.parametrize(("d_model", "expected"), [(4096, 11008), (5120, 13824), (8192, 22016)])
def test_llama_d_ff(d_model: int, expected: int) -> None:
    # LLaMA-7B, 13B and 65B intermediate sizes (Touvron et al. 2023; HF configs).
    assert llama_d_ff(d_model) == expected


@given(st.integers(1, 2048), st.integers(1, 8192), st.booleans())
def test_matched_d_ff_is_the_closest_integer(d_model: int, d_ff: int, bias: bool) -> None:
    plain = param_counts(FFNConfig(d_model, d_ff, "relu", bias))["total"]
    matched = matched_gated_d_ff(d_model, d_ff, bias=bias)

    def gap(n: int) -> int:
        return abs(param_counts(FFNConfig(d_model, n, "swiglu", bias))["total"] - plain)

    assert gap(matched) <= gap(matched + 1)
    if matched > 1:
        assert gap(matched) <= gap(matched - 1)


def test_budget_params_flat_flops_grow() -> None:
    data = block_budget(FFNConfig(16, 64, "relu"), 6, 2, 64)
    s = data["series"]
    assert s["tokens"] == [1, 2, 4, 6, 8, 16, 32, 64]
    assert len(set(s["ffn_params"])) == 1 and len(set(s["attention_params"])) == 1
    assert all(b > a for a, b in zip(s["ffn_flops"], s["ffn_flops"][1:], strict=False))
    # FFN FLOPs are linear in T: per-token cost is the same for every T.
    per_token = {f // t for f, t in zip(s["ffn_flops"], s["tokens"], strict=True)}
    assert len(per_token) == 1
    assert data["params_ratio"] == pytest.approx(2128 / 1088)


def test_token_ladder_and_errors() -> None:
    assert token_ladder(5, 12) == [1, 2, 4, 5, 8, 12]
    with pytest.raises(ValueError):
        llama_d_ff(0)
    with pytest.raises(ValueError):
        attention_flop_count(4, 0)
