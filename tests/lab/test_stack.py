"""app.lab.stack without HTTP: the perturbation check catches a stack that mixes rows."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from app.lab.stack.run import build_stack, run_stack
from app.model.ffn import FFNConfig
from app.model.stack import StackError

CONFIG = FFNConfig(8, 32, "relu")


class SequenceNorm(nn.Module):
    """A faulty 'LayerNorm' over positions instead of features: it mixes rows."""

    def forward(self, x: Tensor) -> Tensor:
        return (x - x.mean(0, keepdim=True)) / (x.std(0, keepdim=True) + 1e-5)


def test_the_bit_for_bit_check_catches_mixing() -> None:
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    nudge = torch.ones(8)
    stack = build_stack(CONFIG, 3, 1)
    clean = run_stack(stack, x, position=1, nudge=nudge)
    assert [layer.change.changed_positions for layer in clean.layers if layer.change] == [[1]] * 3
    stack.layers[1].ffn_norm = SequenceNorm()  # the fault
    faulty = run_stack(stack, x, position=1, nudge=nudge)
    changes = [layer.change for layer in faulty.layers if layer.change]
    assert changes[0].changed_positions == [1]
    assert changes[1].changed_positions == [0, 1, 2, 3, 4]
    assert changes[2].max_abs_change_other_positions > 0


def test_domain_errors_are_value_errors() -> None:
    with pytest.raises(StackError, match="n_layers"):
        build_stack(CONFIG, 0, 0)
    with pytest.raises(StackError, match="norm"):
        build_stack(CONFIG, 1, 0, norm="sandwich")
    with pytest.raises(StackError, match="divisible"):
        build_stack(CONFIG, 1, 0, attention=True, num_heads=3)
    stack = build_stack(CONFIG, 2, 0)
    with pytest.raises(StackError, match="position"):
        run_stack(stack, torch.zeros(3, 8), position=3, nudge=torch.ones(8))
    with pytest.raises(StackError, match=r"\[T, 8\]"):
        run_stack(stack, torch.zeros(3, 7))
    assert issubclass(StackError, ValueError)


def test_zero_rows_have_no_update_ratio() -> None:
    result = run_stack(build_stack(CONFIG, 1, 0), torch.zeros(2, 8))
    assert torch.isnan(torch.from_numpy(result.layers[0].update_ratio)).all()


def test_each_layer_draws_from_its_own_stream() -> None:
    from app.model.ffn_weights import _linear_init
    from app.model.seeding import generator

    stack = build_stack(CONFIG, 3, 7, attention=True)
    for i, layer in enumerate(stack.layers):
        w1, _ = _linear_init(8, 32, generator(7, f"layer{i}.weights"))
        assert torch.equal(layer.ffn.weights().w1, w1)
        assert layer.attention is not None
        w_q, _ = _linear_init(8, 8, generator(7, f"layer{i}.attention"))
        assert torch.equal(layer.attention.weights().w_q, w_q)
    shared = build_stack(CONFIG, 3, 7, share_weights=True)
    assert all(layer.ffn is shared.layers[0].ffn for layer in shared.layers)
    assert torch.equal(shared.layers[0].ffn.weights().w1, stack.layers[0].ffn.weights().w1)
