"""What the FFN's formula says about its structure, measured: `nonlinear` and
`no_residual_inside`.

Both find the down-projection W2 on a forward pass: the last matrix product whose output
is d_model wide, its weight (a parameter, whatever its layout: nn.Linear's [out, in],
GPT-2's Conv1D [in, out], a functional `h @ W2`) and the hidden tensor it multiplies.

- nonlinear: an affine map f satisfies f(x + y) = f(x) + f(y) - f(0) for all x, y; the
  gap, relative to the outputs' size, is ~1e-7 in float32 for an affine map and of order
  0.1 with a ReLU/GELU/SiLU between the projections. Inputs at scales 1 and 4 and the pair
  (x, -x) cross every kink and leave every near-linear region. The hidden tensor is tested
  as well: when it is affine in x but the output is not, the activation comes after W2.
- no_residual_inside: W2's weight is zeroed for one forward pass (restored after); what
  still depends on x bypasses the FFN's formula. Proportional to x: the input is carried
  through (a residual `x + ...` inside the FFN).

Both run in eval mode with dropout replaced by the identity, under `torch.no_grad()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from app.lab.checker.trace import DROPOUT_OPS, storage_pointer

_PRODUCTS = frozenset(
    {"linear", "matmul", "mm", "bmm", "__matmul__", "__rmatmul__", "addmm", "baddbmm",
     "einsum", "mv", "inner"}
)  # fmt: skip
AFFINE_GAP = 1e-4  # relative gap below which a map counts as affine (float32 gives ~1e-7)


def _tensors(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


@dataclass
class DownProjection:
    """The last product back to d_model on one forward pass.

    Attributes:
        hidden: the tensor W2 multiplies (what enters the down-projection).
        weight_name: the parameter's name in the module, e.g. "w_2.weight".
        weight: the parameter itself (None when the product used no parameter).
    """

    hidden: Tensor
    weight_name: str | None
    weight: nn.Parameter | None


class _Capture(TorchFunctionMode):
    """Dropout as the identity; remembers the last product whose output is d_model wide."""

    def __init__(self, d_model: int, params: dict[int, tuple[str, nn.Parameter]]) -> None:
        super().__init__()
        self.d_model = d_model
        self.params = params
        self.last: DownProjection | None = None

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        if name in DROPOUT_OPS:
            return args[0] if args else kwargs["input"]
        out = func(*args, **kwargs)
        if (
            name in _PRODUCTS
            and isinstance(out, Tensor)
            and out.dim()
            and out.shape[-1] == self.d_model
        ):
            operands = list(_tensors((args, tuple(kwargs.values()))))
            owned = [self.params.get(storage_pointer(t)) for t in operands]
            hidden = [t for t, p in zip(operands, owned, strict=True) if p is None]
            weights = [p for p in owned if p is not None and p[1].dim() == 2]
            if hidden and hidden[0].shape[-1] != self.d_model:
                name_w, weight = weights[0] if weights else (None, None)
                self.last = DownProjection(hidden[0].detach().clone(), name_w, weight)
        return out


def _parameters(module: nn.Module) -> dict[int, tuple[str, nn.Parameter]]:
    return {storage_pointer(p): (n, p) for n, p in module.named_parameters()}


def run_plain(module: nn.Module, x: Tensor) -> tuple[Tensor, DownProjection | None]:
    """module(x) in eval mode without dropout, and the down-projection it used."""
    module.eval()
    capture = _Capture(x.shape[-1], _parameters(module))
    with torch.no_grad(), capture:
        y = module(x)
    if not isinstance(y, Tensor):
        raise TypeError(f"forward returned {type(y).__name__}, not one tensor [B, T, d_model]")
    return y, capture.last


def affine_gap(f: Callable[[Tensor], Tensor], pairs: list[tuple[Tensor, Tensor]]) -> float:
    """max over pairs of |f(x+y) - f(x) - f(y) + f(0)| / max|f(.)|: ~0 when f is affine."""
    worst = 0.0
    for x, y in pairs:
        values = [f(x + y), f(x), f(y), f(torch.zeros_like(x))]
        gap = (values[0] - values[1] - values[2] + values[3]).abs().max()
        size = max(float(v.abs().max()) for v in values)
        worst = max(worst, float(gap) / size if size > 0 else 0.0)
    return worst


@contextmanager
def zeroed(weight: nn.Parameter) -> Iterator[None]:
    """`weight` set to zero inside the block, restored on exit (also on an error)."""
    kept = weight.detach().clone()
    with torch.no_grad():
        weight.zero_()
    try:
        yield
    finally:
        with torch.no_grad():
            weight.copy_(kept)


def carried_fraction(changes: Tensor, x: Tensor) -> tuple[float, float]:
    """(c, misfit): least-squares `changes ≈ c x`, and the misfit relative to |changes|."""
    c = float((changes * x).sum() / (x * x).sum())
    size = float(changes.abs().max())
    misfit = float((changes - c * x).abs().max()) / size if size > 0 else 0.0
    return c, misfit
