"""Capacity: the memorised fraction against d_ff for the same pairs."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

from app.lab.learning.memory import TrainConfig, TrainError
from app.lab.learning.train import run_to_end


@dataclass(frozen=True)
class CapacityPoint:
    """One width of a capacity sweep: the memorised fraction after training.

    Attributes:
        d_ff: the hidden width (None for the model without the FFN).
        params: trainable parameters.
        memorised_fraction: accuracy on the training pairs after `steps` steps.
        final_loss: the last cross-entropy.
        dead_units: units inactive on every key at the end (None without the FFN).
        stopped: as `Final.stopped`.
    """

    d_ff: int | None
    params: int
    memorised_fraction: float
    final_loss: float
    dead_units: int | None
    stopped: str


def capacity_sweep(
    config: TrainConfig,
    d_ff_values: list[int],
    *,
    include_no_ffn: bool = True,
    max_seconds: float | None = None,
    on_step: Callable[[], None] | None = None,
) -> Generator[CapacityPoint, None, None]:
    """Train the same task (same keys, targets, seed) once per d_ff in `d_ff_values` (and
    once without the FFN, first) and yield each point as it is done.

    `max_seconds` bounds each run. Closing the generator stops the sweep.

    Raises:
        TrainError: an empty list or a width < 1.
    """
    if not d_ff_values or min(d_ff_values) < 1:
        raise TrainError("d_ff_values must be a non-empty list of widths of at least 1")
    runs: list[TrainConfig] = []
    if include_no_ffn:
        runs.append(replace(config, ffn=False))
    runs += [replace(config, ffn=True, d_ff=width) for width in d_ff_values]
    for run in runs:
        final = run_to_end(run, max_seconds=max_seconds, on_step=on_step)
        yield CapacityPoint(
            d_ff=run.d_ff if run.ffn else None,
            params=final.params["total"],
            memorised_fraction=final.progress.accuracy,
            final_loss=final.progress.loss,
            dead_units=final.progress.dead_units,
            stopped=final.stopped,
        )
