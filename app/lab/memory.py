"""Watching an FFN learn a memory: training in PyTorch, step by step.

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

This module: the task, the model and its sizes. The training loop is `app.lab.train`,
the key-value reading `app.lab.reading`, the capacity sweep `app.lab.capacity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from app.analysis import param_counts
from app.analysis.sparsity import DEFAULT_THRESHOLD
from app.model.activations import get_activation
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward
from app.model.ffn_weights import seeded_linear
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
                d, config.d_ff, config.seed, gated=ffn_config.gated, bias=True, stream="train.init"
            )
            self.ffn = PositionwiseFeedForward(ffn_config, weights)
        else:
            self.linear = seeded_linear(d, d, init_seed)
        self.readout = seeded_linear(
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
