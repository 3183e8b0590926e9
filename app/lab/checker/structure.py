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

from app.lab.checker.basics import Failed, NotApplicable, Setup, inputs, num
from app.lab.checker.trace import (
    DROPOUT_OPS,
    Event,
    hidden_width,
    module_label,
    storage_pointer,
)

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


class StructureChecks:
    """nonlinear and no_residual_inside (and what residual_ready asks of the latter);
    `checks.Checks` mixes these in and provides `module`, `setup` and `events()`."""

    module: nn.Module
    setup: Setup
    _carried: tuple[float, float] | None = None  # (c, largest change) once measured

    def events(self) -> list[Event]:
        """The traced forward pass (provided by `Checks`)."""
        raise NotImplementedError

    # -- nonlinear ----------------------------------------------------------------------
    def nonlinear(self) -> tuple[bool, str]:
        """FFN(x + y) != FFN(x) + FFN(y) - FFN(0): an activation sits between W1 and W2."""
        d = self.setup.d_model
        t = self.setup.lengths[0]
        pairs = []
        for k, scale in enumerate((1.0, 4.0)):
            x = inputs(self.module, (2, t, d), seed=60 + 2 * k) * scale
            y = inputs(self.module, (2, t, d), seed=61 + 2 * k) * scale
            pairs += [(x, y), (x, -x)]
        _, down = run_plain(self.module, pairs[0][0])
        output_gap = affine_gap(lambda v: run_plain(self.module, v)[0], pairs)
        w1, w2 = self._projection_labels()
        if down is None:
            where = "its output"
            hidden_gap = output_gap
        else:
            where = f"the hidden layer entering {w2 or 'the down-projection'}"
            hidden_gap = affine_gap(lambda v: self._hidden(v), pairs)
        if max(output_gap, hidden_gap) < AFFINE_GAP:
            between = f" between {w1} and {w2}" if w1 and w2 else " between W1 and W2"
            return False, (
                f"FFN(x + y) = FFN(x) + FFN(y) - FFN(0) up to {num(output_gap)} (relative) at "
                f"input scales 1 and 4: the FFN is an affine map. Two linears with no "
                f"activation between them collapse into one (x W1 W2); the activation "
                f"(ReLU, GELU, SiLU) is missing{between}"
            )
        if hidden_gap < AFFINE_GAP:
            return False, (
                f"{where} is an affine function of x (gap {num(hidden_gap)}), but the output "
                f"is not: the activation comes after W2. FFN(x) = act(x W1 + b1) W2 + b2 "
                "applies it to the hidden layer, before the down-projection"
            )
        return True, (
            f"{where} is not affine in x: |H(x + y) - H(x) - H(y) + H(0)| up to "
            f"{num(hidden_gap)} of its size at input scales 1 and 4 (an affine map gives ~0)"
        )

    def _hidden(self, x: Tensor) -> Tensor:
        _, down = run_plain(self.module, x)
        if down is None:
            raise Failed("the down-projection back to d_model was not seen on every call")
        return down.hidden

    def _projection_labels(self) -> tuple[str | None, str | None]:
        """The submodules mapping d_model -> hidden and hidden -> d_model, when named."""
        d = self.setup.d_model
        width, _ = hidden_width(self.events(), d)
        if width is None or width == d:
            return None, None
        return module_label(self.events(), (d,), width), module_label(self.events(), (width,), d)

    # -- no_residual_inside -------------------------------------------------------------
    def _bypass(self) -> tuple[str | None, float, float, float] | None:
        """With W2's weight zeroed: (weight name, largest change of the output with x,
        carried fraction c, misfit of changes ≈ c·x); None when W2 has no weight."""
        d = self.setup.d_model
        x = inputs(self.module, (2, self.setup.lengths[0], d), seed=70)
        _, down = run_plain(self.module, x)
        if down is None or down.weight is None:
            return None
        with zeroed(down.weight):
            base = run_plain(self.module, torch.zeros_like(x))[0]
            changes = run_plain(self.module, x)[0] - base
        if changes.shape != x.shape:
            return down.weight_name, float(changes.abs().max()), 0.0, 1.0
        c, misfit = carried_fraction(changes, x)
        return down.weight_name, float(changes.abs().max()), c, misfit

    def _carried_input(self) -> tuple[float, float] | None:
        """(c, largest change) when the output carries c·x past W2, else None."""
        if self._carried is None:
            try:
                bypass = self._bypass()
            except Exception:
                bypass = None
            found = bypass is not None and bypass[1] > 1e-5 and bypass[3] < 1e-3
            self._carried = (bypass[2], bypass[1]) if found and bypass is not None else (0.0, 0.0)
        return self._carried if self._carried[1] > 0 else None

    def no_residual_inside(self) -> tuple[bool, str]:
        """With W2 zeroed the output does not change with x (nothing bypasses the FFN)."""
        bypass = self._bypass()
        if bypass is None:
            raise NotApplicable(
                "no down-projection weight back to d_model was found to zero "
                "(shapes and shared_parameters judge the projections)"
            )
        name, change, c, misfit = bypass
        w2 = name or "W2"
        if change <= 1e-5:
            return True, (
                f"with {w2} zeroed the output no longer depends on x (changes by "
                f"{num(change)}): nothing bypasses the down-projection; x + FFN(x) is the block's"
            )
        if misfit < 1e-3:
            return False, (
                f"with {w2} zeroed the output is still {num(c)}·x + a constant: the FFN adds "
                "its input itself (return x + ...). The residual belongs to the block, "
                "x + FFN(x), so x would be added twice; return the FFN's output alone"
            )
        return False, (
            f"with {w2} zeroed the output still changes with x (by up to {num(change)}): part "
            "of the output bypasses the down-projection (a skip path, or a norm of x + ... "
            "inside the FFN); the residual and its norm belong to the block"
        )
