"""The training loop of the memory task: autograd, Adam, full batch.

`train` is a generator of `Progress` records (every `log_every` steps, and step 0) ending
with a `Final` record; closing it stops the work before the next step. The task and the
model are `app.lab.learning.memory`; nothing here knows HTTP.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from app.analysis.sparsity import inactive_mask
from app.lab.learning.memory import F32, TrainConfig, TrainError, memory_task
from app.lab.learning.reading import UnitReading, read_unit
from app.model.activations import get_activation
from app.model.memory import MemoryModel


@dataclass(frozen=True)
class Progress:
    """The model after `step` Adam steps, measured on every training pair.

    Attributes:
        step: steps taken so far (0: the initial weights).
        loss: mean cross-entropy (nats).
        accuracy: fraction of pairs whose argmax logit is the target (memorised).
        dead_units: FFN units inactive on every key (None without the FFN).
    """

    step: int
    loss: float
    accuracy: float
    dead_units: int | None


@dataclass(frozen=True)
class Final:
    """The last record of a run.

    Attributes:
        progress: the final measurement (step = steps actually run).
        stopped: "completed", or "time_limit" when `max_seconds` ran out first.
        seconds: wall time of the run.
        memorised: pairs whose argmax logit is the target.
        num_pairs: of how many.
        params: trainable parameters ("sublayer", "readout", "total").
        dead_unit_indices: the units inactive on every key (empty without the FFN).
        reading: the key-value reading of one unit (None without the FFN).
        rule: the sparsity rule ("exact_zero" for ReLU, else "abs_below_threshold").
        targets: the target class of every pair.
        keys: float32 [num_pairs, d_model], the training keys.
        weights: the final weights, float32, paper orientation: w1 [d_model, d_ff], b1,
            w2 [d_ff, d_model], b2 (and w_gate, b_gate when gated) with the FFN and the same-budget
            linear map, or a [d_model, d_model] and a_bias with the square linear map;
            w_u [d_model, num_classes] and b_u (the readout).
    """

    progress: Progress
    stopped: str
    seconds: float
    memorised: int
    num_pairs: int
    params: dict[str, int]
    dead_unit_indices: list[int]
    reading: UnitReading | None
    rule: str
    targets: list[int] = field(default_factory=list)
    keys: F32 | None = None
    weights: dict[str, F32] = field(default_factory=dict)


def _measure(
    model: MemoryModel, keys: Tensor, targets: Tensor, step: int, config: TrainConfig
) -> tuple[Progress, Tensor | None, Tensor]:
    with torch.no_grad():
        logits, hidden = model(keys)
        loss = float(nn.functional.cross_entropy(logits, targets))
        correct = logits.argmax(dim=1) == targets
    dead: Tensor | None = None
    if hidden is not None:
        inactive, _, _ = inactive_mask(hidden, config.activation, config.threshold)
        dead = inactive.all(dim=0)
    progress = Progress(
        step=step,
        loss=loss,
        accuracy=float(correct.float().mean()),
        dead_units=None if dead is None else int(dead.sum()),
    )
    return progress, hidden, correct


def train(
    config: TrainConfig,
    *,
    unit: int | None = None,
    max_seconds: float | None = None,
    on_step: Callable[[], None] | None = None,
) -> Generator[Progress | Final, None, None]:
    """Train and yield `Progress` at step 0, every `log_every` steps and at the end, then
    one `Final`. Closing the generator stops the work before the next step.

    Args:
        config: the run.
        unit: which unit the final key-value reading shows (default: `most_readable_unit`).
        max_seconds: stop early (Final.stopped = "time_limit") after this much wall time.
        on_step: called after every optimiser step (e.g. a server's work counter).

    Raises:
        TrainError: as `read_unit` for a bad unit (checked before training).
    """
    if unit is not None and config.ffn and not 0 <= unit < config.d_ff:
        raise TrainError(f"unit must be in [0, {config.d_ff - 1}], got {unit}")
    started = time.monotonic()
    keys, targets = memory_task(config)
    model = MemoryModel(
        config.d_model,
        config.d_ff,
        config.activation,
        config.num_classes,
        config.seed,
        config.ffn,
        same_budget=config.same_budget,
    )
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    progress, _, _ = _measure(model, keys, targets, 0, config)
    yield progress
    stopped = "completed"
    step = 0
    while step < config.steps:
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            stopped = "time_limit"
            break
        optimiser.zero_grad(set_to_none=True)
        logits, _ = model(keys)
        loss = nn.functional.cross_entropy(logits, targets)
        loss.backward()  # type: ignore[no-untyped-call]
        optimiser.step()
        step += 1
        if on_step is not None:
            on_step()
        if step % config.log_every == 0 and step < config.steps:
            progress, _, _ = _measure(model, keys, targets, step, config)
            yield progress
    progress, hidden, correct = _measure(model, keys, targets, step, config)
    yield progress
    dead: list[int] = []
    rule = "exact_zero" if get_activation(config.activation).exact_zeros else "abs_below_threshold"
    if hidden is not None:
        inactive, _, rule = inactive_mask(hidden, config.activation, config.threshold)
        dead = [int(i) for i in torch.nonzero(inactive.all(dim=0)).flatten()]
    yield Final(
        progress=progress,
        stopped=stopped,
        seconds=time.monotonic() - started,
        memorised=int(correct.sum()),
        num_pairs=config.num_pairs,
        params=model.param_counts(),
        dead_unit_indices=dead,
        reading=read_unit(model, keys, targets, config, unit),
        rule=rule,
        targets=[int(t) for t in targets],
        keys=keys.numpy(),
        weights=model.final_weights(),
    )


def run_to_end(
    config: TrainConfig,
    *,
    max_seconds: float | None = None,
    on_step: Callable[[], None] | None = None,
) -> Final:
    """Run `train` to its `Final` record."""
    for record in train(config, max_seconds=max_seconds, on_step=on_step):
        if isinstance(record, Final):
            return record
    raise TrainError("training ended without a final record")  # pragma: no cover
