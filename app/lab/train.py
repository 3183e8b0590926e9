"""Watching an FFN learn a memory (issue 13, part 2): training in PyTorch, step by step.

The task ("memory"): `num_pairs` random keys k_i ~ N(0, I) in R^d_model, each with a random
target class y_i out of `num_classes`, to be memorised (Geva et al. 2021, "Transformer
Feed-Forward Layers Are Key-Value Memories", read W1's columns as keys and W2's rows as
values). The model is one residual sub-layer and a readout, as in a Transformer:

    logits = (x + f(x)) W_U + b_U,     f = FFN(x) = act(x W1 + b1) W2 + b2   (ffn=True)
                                       f = x A + a, a linear map           (ffn=False)

trained on all pairs at once (full batch) with cross-entropy, autograd and Adam (Kingma &
Ba 2015). Without the FFN the whole model is linear in x, so it can separate far fewer
random pairs: the course's "remove the FFN and it gets much worse", measured.

Randomness comes from independent streams of the seed (`app.model.seeding`):
"train.keys", "train.targets", "train.init" (f's weights, PyTorch's nn.Linear init) and
"train.readout" (W_U, b_U). Same arguments, same numbers.

`train` is a generator of `Progress` records (every `log_every` steps, and step 0) ending
with a `Final` record; closing it stops the work at once. Nothing here knows HTTP.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from app.analysis import param_counts
from app.analysis.sparsity import DEFAULT_THRESHOLD, inactive_mask
from app.model.activations import get_activation
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward, _linear_init
from app.model.seeding import generator, stream_seed

F32 = npt.NDArray[np.float32]
TASKS: tuple[str, ...] = ("memory",)


class TrainError(ValueError):
    """A training setup that cannot run (unknown task, non-positive size or rate, ...)."""


@dataclass(frozen=True)
class TrainConfig:
    """One training run.

    Attributes:
        task: "memory" (the only task so far).
        d_model: width of a key (and of the residual stream).
        d_ff: hidden width of the FFN (ignored when `ffn` is False).
        activation: a key of `app.model.ACTIVATIONS`.
        num_pairs: how many (key, target) pairs to memorise.
        num_classes: how many target classes (>= 2).
        steps: Adam steps (full batch each).
        lr: Adam's learning rate.
        seed: the user's seed (streams "train.keys", "train.targets", "train.init",
            "train.readout").
        ffn: True: the FFN sub-layer; False: a linear map d_model -> d_model in its place.
        log_every: a progress record every this many steps (and at step 0 and the end).
        threshold: |h| below this is inactive for smooth activations (ReLU: exact zeros).

    Raises:
        TrainError: for an unknown task or activation, or a non-positive size, step count
            or learning rate.
    """

    task: str = "memory"
    d_model: int = 16
    d_ff: int = 64
    activation: str = "relu"
    num_pairs: int = 64
    num_classes: int = 16
    steps: int = 300
    lr: float = 0.01
    seed: int = 0
    ffn: bool = True
    log_every: int = 10
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise TrainError(f"unknown task {self.task!r}; supported: {', '.join(TASKS)}")
        for name in ("d_model", "d_ff", "num_pairs", "steps", "log_every"):
            if getattr(self, name) < 1:
                raise TrainError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.num_classes < 2:
            raise TrainError(f"num_classes must be at least 2, got {self.num_classes}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise TrainError(f"lr must be a positive number, got {self.lr}")
        if self.threshold < 0:
            raise TrainError(f"threshold must be >= 0, got {self.threshold}")
        try:
            get_activation(self.activation)
        except ValueError as error:
            raise TrainError(str(error)) from None


def memory_task(config: TrainConfig) -> tuple[Tensor, Tensor]:
    """(keys float32 [num_pairs, d_model] ~ N(0, I), targets int64 [num_pairs] in
    [0, num_classes)), from the streams "train.keys" and "train.targets"."""
    keys = torch.randn(
        config.num_pairs, config.d_model, generator=generator(config.seed, "train.keys")
    )
    targets = torch.randint(
        0,
        config.num_classes,
        (config.num_pairs,),
        generator=generator(config.seed, "train.targets"),
    )
    return keys, targets


class MemoryModel(nn.Module):
    """logits = (x + f(x)) W_U + b_U with f the FFN or a linear map (see the module doc)."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        d = config.d_model
        self.ffn: PositionwiseFeedForward | None = None
        self.linear: nn.Linear | None = None
        init_seed = stream_seed(config.seed, "train.init")
        if config.ffn:
            ffn_config = FFNConfig(d, config.d_ff, config.activation)
            weights = FFNWeights.seeded(
                d, config.d_ff, init_seed, gated=ffn_config.gated, bias=True
            )
            self.ffn = PositionwiseFeedForward(ffn_config, weights)
        else:
            self.linear = _seeded_linear(d, d, init_seed)
        self.readout = _seeded_linear(
            d, config.num_classes, stream_seed(config.seed, "train.readout")
        )
        self.requires_grad_(True)  # PositionwiseFeedForward is built frozen

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor | None]:
        """x [N, d_model] -> (logits [N, num_classes], hidden [N, d_ff] or None)."""
        if self.ffn is not None:
            trace = self.ffn.trace(x)
            return self.readout(x + trace.output), trace.hidden
        if self.linear is None:  # pragma: no cover - set in __init__ when ffn is False
            raise TrainError("the model has neither an FFN nor a linear map")
        return self.readout(x + self.linear(x)), None

    def final_weights(self) -> dict[str, F32]:
        """Copies of every weight in the paper's orientation (see `Final.weights`)."""
        out: dict[str, Tensor] = {}
        if self.ffn is not None:
            out |= {k: v for k, v in self.ffn.weights().named().items()}
        elif self.linear is not None:
            out |= {"a": self.linear.weight.T, "a_bias": self.linear.bias}
        out |= {"w_u": self.readout.weight.T, "b_u": self.readout.bias}
        return {
            k: v.detach().clone(memory_format=torch.contiguous_format).numpy()
            for k, v in out.items()
        }

    def param_counts(self) -> dict[str, int]:
        """Trainable parameters: "sublayer" (FFN or linear map), "readout" and "total"."""
        sub = self.ffn if self.ffn is not None else self.linear
        sublayer = sum(p.numel() for p in sub.parameters()) if sub is not None else 0
        readout = sum(p.numel() for p in self.readout.parameters())
        return {"sublayer": sublayer, "readout": readout, "total": sublayer + readout}


def _seeded_linear(fan_in: int, fan_out: int, seed: int) -> nn.Linear:
    """nn.Linear with PyTorch's default init drawn from `seed` (as `FFNWeights.seeded`)."""
    weight, bias = _linear_init(fan_in, fan_out, torch.Generator().manual_seed(seed))
    linear = nn.Linear(fan_in, fan_out)
    with torch.no_grad():
        linear.weight.copy_(weight.T)
        linear.bias.copy_(bias)
    return linear


def model_params(config: TrainConfig) -> int:
    """Trainable parameters of the model `config` builds, without building it."""
    d = config.d_model
    readout = d * config.num_classes + config.num_classes
    if not config.ffn:
        return d * d + d + readout
    return param_counts(FFNConfig(d, config.d_ff, config.activation))["total"] + readout


def training_flops(config: TrainConfig) -> int:
    """About 3 forward passes' FLOPs per step (forward + backward), plus the logging passes."""
    d, n = config.d_model, config.num_pairs
    width = config.d_ff if config.ffn else d
    gated = 2 if config.ffn and get_activation(config.activation).gated else 1
    forward = 2 * n * (d * width * gated + width * d + d * config.num_classes)
    logs = config.steps // config.log_every + 2
    return forward * (3 * config.steps + logs)


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
            w2 [d_ff, d_model], b2 (and w_gate, b_gate) with the FFN, or a [d_model, d_model]
            and a_bias without; w_u [d_model, num_classes] and b_u (the readout).
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


def read_unit(
    model: MemoryModel,
    keys: Tensor,
    targets: Tensor,
    config: TrainConfig,
    unit: int | None = None,
) -> UnitReading | None:
    """The key-value reading of `unit` (default: the unit with the largest mean |activation|
    over the keys). None without the FFN.

    Raises:
        TrainError: a unit outside [0, d_ff).
    """
    if model.ffn is None:
        return None
    with torch.no_grad():
        hidden = model.ffn.trace(keys).hidden  # (N, d_ff)
        if unit is None:
            unit = int(hidden.abs().mean(dim=0).argmax())
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
        unit: which unit the final key-value reading shows (default: the most active).
        max_seconds: stop early (Final.stopped = "time_limit") after this much wall time.
        on_step: called after every optimiser step (e.g. a server's work counter).

    Raises:
        TrainError: as `read_unit` for a bad unit (checked before training).
    """
    if unit is not None and config.ffn and not 0 <= unit < config.d_ff:
        raise TrainError(f"unit must be in [0, {config.d_ff - 1}], got {unit}")
    started = time.monotonic()
    keys, targets = memory_task(config)
    model = MemoryModel(config)
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
