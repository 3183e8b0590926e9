"""Parameter and FLOP counts, by formula."""

from __future__ import annotations

import pytest
import torch

from app.analysis import flop_count, param_counts
from app.model import FFNConfig, PositionwiseFeedForward


def test_transformer_base_has_2_099_712_parameters():
    counts = param_counts(FFNConfig(512, 2048, "relu", bias=True))
    assert counts["total"] == 2_099_712
    assert counts == {"w1": 512 * 2048, "b1": 2048, "w2": 2048 * 512, "b2": 512, "total": 2_099_712}


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
@pytest.mark.parametrize("bias", [True, False])
def test_counts_equal_the_modules_parameters(activation, bias):
    config = FFNConfig(7, 19, activation, bias)
    model = PositionwiseFeedForward(config, seed=0)
    assert param_counts(config)["total"] == sum(p.numel() for p in model.parameters())


def test_llama_7b_ffn_parameters():
    assert param_counts(FFNConfig(4096, 11008, "swiglu", bias=False))["total"] == 3 * 4096 * 11008


def test_flops_grow_with_tokens_parameters_do_not():
    config = FFNConfig(512, 2048, "relu")
    one, eight = flop_count(config, 1), flop_count(config, 8)
    assert eight.total == 8 * one.total
    assert one.up == 2 * 512 * 2048 and one.down == 2 * 2048 * 512
    assert one.total == 2 * 512 * 2048 * 2 + 2048 + (2048 + 512)
    gated = flop_count(FFNConfig(512, 2048, "swiglu", bias=False), 4)
    assert gated.up == 2 * 2 * 4 * 512 * 2048
    assert gated.gating == 4 * 2048 and gated.bias == 0
    assert gated.total == gated.up + gated.activation + gated.gating + gated.down


def test_flops_reject_zero_tokens():
    with pytest.raises(ValueError, match="num_tokens must be >= 1"):
        flop_count(FFNConfig(2, 4), 0)


def test_matmul_flops_match_torch_flop_counter():
    """torch's own FlopCounterMode counts the two matmuls the same way."""
    from torch.utils.flop_counter import FlopCounterMode

    config = FFNConfig(32, 96, "relu", bias=False)
    model = PositionwiseFeedForward(config, seed=0)
    with FlopCounterMode(display=False) as counter:
        model(torch.randn(5, 32))
    counted = flop_count(config, 5)
    assert counter.get_total_flops() == counted.up + counted.down
