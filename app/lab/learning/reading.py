"""The key-value reading of one FFN unit after training (Geva et al. 2021): its W1 column
(the key it detects) against the training keys it fires on, and its W2 row (the value it
writes) read through the readout against those keys' targets."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.analysis.sparsity import inactive_mask
from app.lab.learning.memory import F32, TrainConfig, TrainError
from app.model.memory import MemoryModel


@dataclass(frozen=True)
class UnitReading:
    """The key-value reading of one FFN unit u after training (Geva et al. 2021).

    Attributes:
        unit: u.
        w1_key: float32 [d_model], column u of W1 (paper orientation): the key it detects.
        b1: its bias.
        key_activation: float32 [num_pairs], hidden[:, u] on each training key.
        key_cosine: float32 [num_pairs], cos(key_i, w1_key).
        fires_on: indices of the keys on which it is active (the sparsity rule).
        w2_value: float32 [d_model], row u of W2: what it adds to the residual stream.
        value_logits: float32 [num_classes], w2_value W_U: the classes it writes.
        target_counts: int [num_classes], the targets of the keys it fires on.
        top_class: argmax of value_logits.
        agreement: fraction of the keys it fires on whose target is top_class (None when
            it fires on none).
    """

    unit: int
    w1_key: F32
    b1: float
    key_activation: F32
    key_cosine: F32
    fires_on: list[int]
    w2_value: F32
    value_logits: F32
    target_counts: list[int]
    top_class: int
    agreement: float | None


def read_unit(
    model: MemoryModel,
    keys: Tensor,
    targets: Tensor,
    config: TrainConfig,
    unit: int | None = None,
) -> UnitReading | None:
    """The key-value reading of `unit` (default: `most_readable_unit`). None without the FFN.

    Raises:
        TrainError: a unit outside [0, d_ff).
    """
    if model.ffn is None:
        return None
    with torch.no_grad():
        hidden = model.ffn.trace(keys).hidden  # (N, d_ff)
        if unit is None:
            unit = most_readable_unit(model, hidden, targets, config)
        if not 0 <= unit < config.d_ff:
            raise TrainError(f"unit must be in [0, {config.d_ff - 1}], got {unit}")
        weights = model.ffn.weights()
        w1_key = (
            weights.w1[:, unit].detach().clone(memory_format=torch.contiguous_format)
        )  # (d_model,)
        b1 = 0.0 if weights.b1 is None else float(weights.b1[unit])
        w2_value = (
            weights.w2[unit, :].detach().clone(memory_format=torch.contiguous_format)
        )  # (d_model,)
        value_logits = w2_value @ model.readout.weight.T  # (num_classes,)
        activation = hidden[:, unit].contiguous()  # (N,)
        inactive, _, _ = inactive_mask(activation, config.activation, config.threshold)
        fires = torch.nonzero(~inactive).flatten()
        cosine = nn.functional.cosine_similarity(keys, w1_key.unsqueeze(0), dim=1)
        counts = torch.bincount(targets[fires], minlength=config.num_classes)
        top = int(value_logits.argmax())
        agreement = float(counts[top]) / len(fires) if len(fires) else None
    return UnitReading(
        unit=unit,
        w1_key=w1_key.numpy(),
        b1=b1,
        key_activation=activation.numpy(),
        key_cosine=cosine.numpy(),
        fires_on=[int(i) for i in fires],
        w2_value=w2_value.numpy(),
        value_logits=value_logits.numpy(),
        target_counts=[int(c) for c in counts],
        top_class=top,
        agreement=agreement,
    )


def most_readable_unit(
    model: MemoryModel, hidden: Tensor, targets: Tensor, config: TrainConfig
) -> int:
    """The unit whose reading says the most: the largest share of the keys it fires on have
    the class its W2 row writes (its `agreement`), among the units that fire on at least
    `max(4, num_pairs // 16)` keys (ties: the one firing on more keys). The most active unit
    fires on most keys and reads at about chance (1 / num_classes); this one reads well
    above it when the FFN has learnt key-value pairs (Geva et al. 2021).

    Args:
        hidden: float32 [N, d_ff], the FFN's hidden units on the N training keys.
        targets: int64 [N], the keys' classes.

    Returns:
        A unit index in [0, d_ff); the most active unit when none fires often enough.
    """
    if model.ffn is None:
        raise TrainError("the model has no FFN to read")
    inactive, _, _ = inactive_mask(hidden, config.activation, config.threshold)
    active = ~inactive  # (N, d_ff)
    writes = model.ffn.weights().w2 @ model.readout.weight.T  # (d_ff, num_classes)
    top = writes.argmax(dim=1)  # (d_ff,)
    fires = active.sum(dim=0)  # (d_ff,)
    agree = (active & (targets.unsqueeze(1) == top.unsqueeze(0))).sum(dim=0)  # (d_ff,)
    share = agree.double() / fires.clamp(min=1).double()
    enough = fires >= max(4, config.num_pairs // 16)
    if not bool(enough.any()):
        return int(hidden.abs().mean(dim=0).argmax())
    score = torch.where(enough, share + fires.double() * 1e-9, -1.0)  # ties: more keys
    return int(score.argmax())
