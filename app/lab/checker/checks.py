"""The checklist itself: eight checks on a built module (raises_on_bad_activation needs the
class and lives in `activation.py`; nonlinear and no_residual_inside measure with the
helpers in `structure.py`).

Every check runs on CPU under `torch.no_grad()`, with inputs from a seeded generator, and
returns a `CheckResult` whose detail carries the measured number. A check that hits an
exception in the student's forward fails with that error named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from app.grading.report import CHECK_NAMES, CheckResult
from app.lab.checker import structure
from app.lab.checker.parameters import parameter_formula
from app.lab.checker.trace import (
    Event,
    hidden_width,
    module_label,
    storage_pointer,
    torch_float,
    watching,
)

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


class _Failed(Exception):
    """A check's verdict reached early (the message is the detail)."""


class _NotApplicable(Exception):
    """The check cannot be measured on this module (the message says why)."""


def _inputs(module: nn.Module, shape: tuple[int, ...], seed: int) -> Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(torch_float(module))


def _forward(module: nn.Module, x: Tensor) -> Tensor:
    """module(x), insisting on one tensor back (with a student-readable error)."""
    with torch.no_grad():
        y = module(x)
    if not isinstance(y, Tensor):
        raise _Failed(f"forward returned {type(y).__name__}, not one tensor [B, T, d_model]")
    return y


def _fmt(shape: tuple[int, ...] | torch.Size) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _num(value: float) -> str:
    return "0" if value == 0 else f"{value:.3g}"


def _run(name: str, body: Callable[[], tuple[bool, str]]) -> CheckResult:
    """Run one check; an exception in the student's code fails it, naming the error."""
    try:
        passed, detail = body()
    except _Failed as exc:
        return CheckResult(name, False, str(exc))
    except _NotApplicable as exc:
        return CheckResult(name, True, f"not applicable: {exc}", skipped=True)
    except Exception as exc:
        return CheckResult(name, False, _raised(exc))
    return CheckResult(name, passed, detail)


def _raised(exc: Exception) -> str:
    """`forward raised RuntimeError: ...`, with a hint when two shapes do not multiply."""
    text = f"forward raised {type(exc).__name__}: {exc}"
    if "cannot be multiplied" in str(exc) or "size mismatch" in str(exc):
        text += (
            " (a weight with the wrong shape, or transposed? nn.Linear(d_in, d_out).weight "
            "is [d_out, d_in]; x @ W needs W as [d_in, d_out])"
        )
    return text


class Checks:
    """The eight module checks, sharing one traced forward pass (eval mode, B=2, T=T1)."""

    def __init__(self, module: nn.Module, setup: Setup) -> None:
        self.module = module
        self.setup = setup
        self._events: list[Event] | None = None
        self._carried: tuple[float, float] | None = None  # no_residual_inside's (c, misfit)

    def events(self) -> list[Event]:
        """Every op and submodule call of one eval forward pass at [2, T1, d_model]."""
        if self._events is None:
            t1 = self.setup.lengths[0]
            x = _inputs(self.module, (2, t1, self.setup.d_model), seed=0)
            self.module.eval()
            with watching(self.module) as events:
                _forward(self.module, x)
            self._events = events
        return self._events

    def run(self, names: tuple[str, ...] = CHECK_NAMES) -> list[CheckResult]:
        """The module checks among `names`, in the checklist's order (the module's
        train/eval mode is restored)."""
        bodies: dict[str, Callable[[], tuple[bool, str]]] = {
            "shapes": self.shapes,
            "position_wise": self.position_wise,
            "no_token_mixing": self.no_token_mixing,
            "shared_parameters": self.shared_parameters,
            "eval_deterministic": self.eval_deterministic,
            "residual_ready": self.residual_ready,
            "nonlinear": self.nonlinear,
            "no_residual_inside": self.no_residual_inside,
        }
        was_training = self.module.training
        try:
            return [
                _run(name, bodies[name]) for name in CHECK_NAMES if name in names and name in bodies
            ]
        finally:
            self.module.train(was_training)

    # -- shapes -----------------------------------------------------------------------
    def shapes(self) -> tuple[bool, str]:
        """[B, T, d_model] -> [B, T, d_model] for several B, T; the hidden width = d_ff."""
        d = self.setup.d_model
        t1, t2 = self.setup.lengths
        cases = [(1, 1), (2, t1), (3, t2)]
        self.module.eval()
        for i, (b, t) in enumerate(cases):
            x = _inputs(self.module, (b, t, d), seed=10 + i)
            y = _forward(self.module, x)
            if y.shape != x.shape:
                return (
                    False,
                    f"input {_fmt(x.shape)} gave output {_fmt(y.shape)}, expected {_fmt(x.shape)}",
                )
        width, where = hidden_width(self.events(), d)
        tried = ", ".join(f"({b}, {t})" for b, t in cases)
        head = f"[B, T, {d}] -> [B, T, {d}] for (B, T) = {tried}"
        if width is None:
            return False, f"{head}, but the hooks saw no hidden layer"
        label = module_label(self.events(), (width,), d)
        found = f"hidden width {width} (" + (f"the input of {label}" if label else where) + ")"
        if self.setup.d_ff is not None and width != self.setup.d_ff:
            return False, f"{head}; {found}, but d_ff={self.setup.d_ff} was asked for"
        return True, f"{head}; {found}" + (" = d_ff" if self.setup.d_ff == width else "")

    # -- position_wise ----------------------------------------------------------------
    def position_wise(self) -> tuple[bool, str]:
        """Perturbing token i changes output row i only; one token, one output everywhere.

        Run at two input scales (entries of standard deviation 1 and 1/sqrt(d_model)):
        dot products between large random tokens make softmax(x x^T) one-hot, which
        hides the mixing; at the small scale it shows. Dropout is the identity here
        (eval_deterministic judges it).
        """
        d = self.setup.d_model
        t = self.setup.lengths[0]
        self.module.eval()
        worst_other = worst_spread = 0.0
        with watching(self.module, drop_dropout=True):
            for k, scale in enumerate((1.0, d**-0.5)):
                verdict = self._position_wise_at(scale, seed=20 + 3 * k)
                if isinstance(verdict, str):
                    at = "" if scale == 1.0 else f" (at input scale 1/sqrt(d_model) = {scale:.3g})"
                    return False, verdict + at
                worst_other = max(worst_other, verdict[0])
                worst_spread = max(worst_spread, verdict[1])
        return True, (
            f"perturbing each of {t} tokens changed only its own row (others by "
            f"{_num(worst_other)}); one token gave one output at all {t} positions "
            f"(spread {_num(worst_spread)}); at input scales 1 and 1/sqrt(d_model)"
        )

    def _position_wise_at(self, scale: float, seed: int) -> tuple[float, float] | str:
        """(largest change of another row, largest spread of one token's outputs), or a
        student-readable failure."""
        d = self.setup.d_model
        t = self.setup.lengths[0]
        x = _inputs(self.module, (2, t, d), seed=seed) * scale
        y = _forward(self.module, x)
        if y.shape[:2] != x.shape[:2]:
            raise _Failed(f"output {_fmt(y.shape)} has no row per token of {_fmt(x.shape)}")
        tol = 1e-5 * max(1.0, float(y.abs().max()))
        nudge = _inputs(self.module, (t, d), seed=seed + 1) * scale
        worst_other = 0.0
        for i in range(t):
            x2 = x.clone()
            x2[0, i] += nudge[i]
            change = (_forward(self.module, x2) - y).abs().flatten(2).amax(dim=-1)  # [B, T]
            own = float(change[0, i])
            change[0, i] = 0.0
            other = float(change.max())
            worst_other = max(worst_other, other)
            if other > tol:
                b, j = divmod(int(change.argmax()), t)
                where = f"row {j}" if b == 0 else f"row {j} of another sequence in the batch"
                return (
                    f"perturbing token {i} also changed output {where} (by {_num(other)}): "
                    "the output at one position depends on other tokens"
                )
            if own <= tol:
                return f"perturbing token {i} did not change output row {i}"
        token = _inputs(self.module, (d,), seed=seed + 2) * scale
        same = _forward(self.module, token.expand(2, t, d).clone())
        spread = (same - same[:, :1]).abs().flatten(2).amax(dim=-1)  # [B, T]
        if float(spread.max()) > tol:
            j = int(spread[0].argmax())
            return (
                f"the same token gave different outputs at positions 0 and {j} "
                f"(by {_num(float(spread.max()))}): the weights differ between positions"
            )
        return worst_other, float(spread.max())

    # -- no_token_mixing --------------------------------------------------------------
    def no_token_mixing(self) -> tuple[bool, str]:
        """No intermediate [T, T] tensor and no op across the T axis (hooks + tracing)."""
        t = self.setup.lengths[0]
        events = self.events()
        findings: list[str] = []
        for event in events:
            what = event.name if event.kind == "op" else f"submodule {event.name}"
            squares = [s for s in (*event.inputs, *event.outputs) if sum(n == t for n in s) >= 2]
            if squares:
                findings.append(f"a [T, T] tensor {_fmt(squares[0])} in {what}")
            elif t in event.across:
                shape = event.inputs[0] if event.inputs else ()
                findings.append(f"{what} across the T axis (size {t}) of {_fmt(shape)}")
        unique = list(dict.fromkeys(findings))
        n_ops = sum(e.kind == "op" for e in events)
        n_mods = sum(e.kind == "module" for e in events)
        if unique:
            more = f" (and {len(unique) - 2} more)" if len(unique) > 2 else ""
            return False, "; ".join(unique[:2]) + more
        return True, (
            f"{n_ops} torch ops and {n_mods} submodule calls at T={t}: "
            "no [T, T] tensor, no op across the T axis"
        )

    # -- shared_parameters ------------------------------------------------------------
    def shared_parameters(self) -> tuple[bool, str]:
        """The count does not depend on T and equals 2 (or 3) d_model d_ff + biases."""
        d = self.setup.d_model
        t1, t2 = self.setup.lengths
        self.module.eval()
        counts = []
        for i, t in enumerate((t1, t2)):
            _forward(self.module, _inputs(self.module, (2, t, d), seed=30 + i))
            counts.append(sum(p.numel() for p in self.module.parameters()))
        if counts[0] != counts[1]:
            return False, (
                f"{counts[0]:,} parameters at T={t1} but {counts[1]:,} at T={t2}: "
                "the weights must not depend on the sequence length"
            )
        width, _ = hidden_width(self.events(), d)
        if width is None:
            return False, f"{counts[0]:,} parameters, and the hooks saw no hidden layer"
        used = {ptr for event in self.events() for ptr in event.pointers}
        touched = {ptr for event in self.events() for ptr in event.touched}
        unused = [
            f"{name} {_fmt(tuple(p.shape))}"
            for name, p in self.module.named_parameters()
            if storage_pointer(p) not in touched
        ]
        if unused and touched:
            more = f" (and {len(unused) - 1} more)" if len(unused) > 1 else ""
            return False, (
                f"{unused[0]}{more} is a parameter the forward pass never uses: a bias "
                "left out of the sum (x W1 + b1, h W2 + b2), or a layer defined but not called"
            )
        return parameter_formula(self.module, d, width, counts[0], (t1, t2), used)

    # -- eval_deterministic -----------------------------------------------------------
    def eval_deterministic(self) -> tuple[bool, str]:
        """Eval: two calls identical. Train: dropout acts when the module has it."""
        d = self.setup.d_model
        x = _inputs(self.module, (2, self.setup.lengths[0], d), seed=40)
        self.module.eval()
        gap = float((_forward(self.module, x) - _forward(self.module, x)).abs().max())
        if gap != 0.0:
            return False, (
                f"two eval-mode calls on the same input differ by up to {_num(gap)}: "
                "something random (dropout?) is on in eval; use nn.Dropout or "
                "F.dropout(h, p, training=self.training)"
            )
        self.module.train()
        with watching(self.module) as events:
            gap_train = float((_forward(self.module, x) - _forward(self.module, x)).abs().max())
        p = _dropout_probability(self.module, events)
        if p is None:
            return True, "eval: two calls identical (difference 0); the module has no dropout"
        if gap_train == 0.0:
            return False, (
                f"eval: two calls identical, but the module has dropout p={p:g} and two "
                "train-mode calls gave identical outputs: dropout does not act"
            )
        return True, (
            f"eval: two calls identical (difference 0); train: dropout p={p:g} acts "
            f"(two calls differ by up to {_num(gap_train)})"
        )

    # -- residual_ready ---------------------------------------------------------------
    def residual_ready(self) -> tuple[bool, str]:
        """The output's last dimension is d_model, so x + FFN(x) is defined."""
        d = self.setup.d_model
        x = _inputs(self.module, (2, self.setup.lengths[0], d), seed=50)
        self.module.eval()
        y = _forward(self.module, x)
        width = y.shape[-1] if y.dim() else None
        if width != d:
            return False, (
                f"output {_fmt(y.shape)}: its last dim {width} is not d_model={d}, so "
                f"x + FFN(x) is undefined (the down-projection W2 maps d_ff back to d_model)"
            )
        if y.shape != x.shape:
            return False, f"output {_fmt(y.shape)}: x + FFN(x) would broadcast {_fmt(x.shape)}"
        carried = self._carried_input()
        if carried is not None:
            return False, (
                f"output {_fmt(y.shape)} has last dim {d} = d_model, but it already contains "
                f"{_num(carried[0])}·x (see no_residual_inside): the block's x + FFN(x) "
                "would add x twice"
            )
        return (
            True,
            f"output {_fmt(y.shape)}: last dim {d} = d_model, x + FFN(x) is {_fmt(x.shape)}",
        )

    # -- nonlinear ----------------------------------------------------------------------
    def nonlinear(self) -> tuple[bool, str]:
        """FFN(x + y) != FFN(x) + FFN(y) - FFN(0): an activation sits between W1 and W2."""
        d = self.setup.d_model
        t = self.setup.lengths[0]
        pairs = []
        for k, scale in enumerate((1.0, 4.0)):
            x = _inputs(self.module, (2, t, d), seed=60 + 2 * k) * scale
            y = _inputs(self.module, (2, t, d), seed=61 + 2 * k) * scale
            pairs += [(x, y), (x, -x)]
        _, down = structure.run_plain(self.module, pairs[0][0])
        output_gap = structure.affine_gap(lambda v: structure.run_plain(self.module, v)[0], pairs)
        w1, w2 = self._projection_labels()
        if down is None:
            where = "its output"
            hidden_gap = output_gap
        else:
            where = f"the hidden layer entering {w2 or 'the down-projection'}"
            hidden_gap = structure.affine_gap(lambda v: self._hidden(v), pairs)
        if max(output_gap, hidden_gap) < structure.AFFINE_GAP:
            between = f" between {w1} and {w2}" if w1 and w2 else " between W1 and W2"
            return False, (
                f"FFN(x + y) = FFN(x) + FFN(y) - FFN(0) up to {_num(output_gap)} (relative) at "
                f"input scales 1 and 4: the FFN is an affine map. Two linears with no "
                f"activation between them collapse into one (x W1 W2); the activation "
                f"(ReLU, GELU, SiLU) is missing{between}"
            )
        if hidden_gap < structure.AFFINE_GAP:
            return False, (
                f"{where} is an affine function of x (gap {_num(hidden_gap)}), but the output "
                f"is not: the activation comes after W2. FFN(x) = act(x W1 + b1) W2 + b2 "
                "applies it to the hidden layer, before the down-projection"
            )
        return True, (
            f"{where} is not affine in x: |H(x + y) - H(x) - H(y) + H(0)| up to "
            f"{_num(hidden_gap)} of its size at input scales 1 and 4 (an affine map gives ~0)"
        )

    def _hidden(self, x: Tensor) -> Tensor:
        _, down = structure.run_plain(self.module, x)
        if down is None:
            raise _Failed("the down-projection back to d_model was not seen on every call")
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
        x = _inputs(self.module, (2, self.setup.lengths[0], d), seed=70)
        _, down = structure.run_plain(self.module, x)
        if down is None or down.weight is None:
            return None
        with structure.zeroed(down.weight):
            base = structure.run_plain(self.module, torch.zeros_like(x))[0]
            changes = structure.run_plain(self.module, x)[0] - base
        if changes.shape != x.shape:
            return down.weight_name, float(changes.abs().max()), 0.0, 1.0
        c, misfit = structure.carried_fraction(changes, x)
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
            raise _NotApplicable(
                "no down-projection weight back to d_model was found to zero "
                "(shapes and shared_parameters judge the projections)"
            )
        name, change, c, misfit = bypass
        w2 = name or "W2"
        if change <= 1e-5:
            return True, (
                f"with {w2} zeroed the output no longer depends on x (changes by "
                f"{_num(change)}): nothing bypasses the down-projection; x + FFN(x) is the block's"
            )
        if misfit < 1e-3:
            return False, (
                f"with {w2} zeroed the output is still {_num(c)}·x + a constant: the FFN adds "
                "its input itself (return x + ...). The residual belongs to the block, "
                "x + FFN(x), so x would be added twice; return the FFN's output alone"
            )
        return False, (
            f"with {w2} zeroed the output still changes with x (by up to {_num(change)}): part "
            "of the output bypasses the down-projection (a skip path, or a norm of x + ... "
            "inside the FFN); the residual and its norm belong to the block"
        )


def _dropout_probability(module: nn.Module, events: list[Event]) -> float | None:
    """The largest dropout probability the module has (submodules or functional calls)."""
    ps = [e.p for e in events if e.p is not None and e.p > 0]
    for sub in module.modules():
        p = getattr(sub, "p", None)
        if "dropout" in type(sub).__name__.lower() and isinstance(p, float) and p > 0:
            ps.append(p)
    return max(ps) if ps else None
