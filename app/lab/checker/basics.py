"""What every check shares: the sizes (`Setup`), seeded inputs, one forward call that
insists on a tensor, number formatting, and the two early verdicts."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.lab.checker.trace import torch_float

# Sequence lengths are picked away from d_model, d_ff and the batch sizes, so a tensor
# with two axes of size T is a [T, T] matrix and an op across a T-sized axis is across T.
_LENGTHS = (7, 5, 11, 13, 17, 19, 23, 29, 31)
_BATCHES = (1, 2, 3)


@dataclass(frozen=True)
class Setup:
    """What the checks need to know about the module.

    Attributes:
        d_model: the token width (input and output).
        d_ff: the hidden width passed to the constructor, or None when it takes none.
        lengths: two sequence lengths T, neither equal to d_model, d_ff or a batch size.
    """

    d_model: int
    d_ff: int | None
    lengths: tuple[int, int]

    @classmethod
    def for_sizes(cls, d_model: int, d_ff: int | None) -> Setup:
        """Pick the two lengths T for these sizes."""
        taken = {d_model, d_ff, *_BATCHES}
        free = [t for t in _LENGTHS if t not in taken]
        return cls(d_model, d_ff, (free[0], free[1]))


class Failed(Exception):
    """A check's verdict reached early (the message is the detail)."""


class NotApplicable(Exception):
    """The check cannot be measured on this module (the message says why)."""


def inputs(module: nn.Module, shape: tuple[int, ...], seed: int) -> Tensor:
    """Standard normal entries of `shape` from a generator seeded with `seed`, in the
    module's float dtype."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(torch_float(module))


def forward(module: nn.Module, x: Tensor) -> Tensor:
    """module(x), insisting on one tensor back (with a student-readable error)."""
    with torch.no_grad():
        y = module(x)
    if not isinstance(y, Tensor):
        raise Failed(f"forward returned {type(y).__name__}, not one tensor [B, T, d_model]")
    return y


def fmt(shape: tuple[int, ...] | torch.Size) -> str:
    """`[2, 7, 16]`."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def num(value: float) -> str:
    """Three significant digits (`0` for zero)."""
    return "0" if value == 0 else f"{value:.3g}"
