"""The checklist itself: eight checks on a built module (raises_on_bad_activation needs the
class and lives in `activation.py`; nonlinear and no_residual_inside are mixed in from
`structure.py`, the shared helpers are in `basics.py`).

Every check runs on CPU under `torch.no_grad()`, with inputs from a seeded generator, and
returns a `CheckResult` whose detail carries the measured number. A check that hits an
exception in the student's forward fails with that error named.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from app.grading.report import CHECK_NAMES, CheckResult
from app.lab.checker.basics import (
    Failed,
    NotApplicable,
    Setup,
    fmt,
    forward,
    inputs,
    num,
)
from app.lab.checker.parameters import parameter_formula
from app.lab.checker.structure import StructureChecks
from app.lab.checker.trace import (
    Event,
    hidden_width,
    module_label,
    storage_pointer,
    watching,
)

TRANSPOSED_HINT = (
    " (a weight with the wrong shape, or transposed? nn.Linear(d_in, d_out).weight "
    "is [d_out, d_in]; x @ W needs W as [d_in, d_out])"
)


def _run(name: str, body: Callable[[], tuple[bool, str]]) -> CheckResult:
    """Run one check; an exception in the student's code fails it, naming the error."""
    try:
        passed, detail = body()
    except Failed as exc:
        return CheckResult(name, False, str(exc))
    except NotApplicable as exc:
        return CheckResult(name, True, f"not applicable: {exc}", skipped=True)
    except Exception as exc:
        return CheckResult(name, False, _raised(exc))
    return CheckResult(name, passed, detail)


def _raised(exc: Exception) -> str:
    """`forward raised RuntimeError: ...`, with a hint when two shapes do not multiply."""
    text = f"forward raised {type(exc).__name__}: {exc}"
    if "cannot be multiplied" in str(exc) or "size mismatch" in str(exc):
        text += TRANSPOSED_HINT
    return text


class Checks(StructureChecks):
    """The eight module checks, sharing one traced forward pass (eval mode, B=2, T=T1)."""

    def __init__(self, module: nn.Module, setup: Setup) -> None:
        self.module = module
        self.setup = setup
        self._events: list[Event] | None = None
        self._carried: tuple[float, float] | None = None  # no_residual_inside's (c, change)

    def events(self) -> list[Event]:
        """Every op and submodule call of one eval forward pass at [2, T1, d_model]."""
        if self._events is None:
            t1 = self.setup.lengths[0]
            x = inputs(self.module, (2, t1, self.setup.d_model), seed=0)
            self.module.eval()
            with watching(self.module) as events:
                forward(self.module, x)
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
            x = inputs(self.module, (b, t, d), seed=10 + i)
            y = forward(self.module, x)
            if y.shape != x.shape:
                return (
                    False,
                    f"input {fmt(x.shape)} gave output {fmt(y.shape)}, expected {fmt(x.shape)}",
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
            f"{num(worst_other)}); one token gave one output at all {t} positions "
            f"(spread {num(worst_spread)}); at input scales 1 and 1/sqrt(d_model)"
        )

    def _position_wise_at(self, scale: float, seed: int) -> tuple[float, float] | str:
        """(largest change of another row, largest spread of one token's outputs), or a
        student-readable failure."""
        d = self.setup.d_model
        t = self.setup.lengths[0]
        x = inputs(self.module, (2, t, d), seed=seed) * scale
        y = forward(self.module, x)
        if y.shape[:2] != x.shape[:2]:
            raise Failed(f"output {fmt(y.shape)} has no row per token of {fmt(x.shape)}")
        tol = 1e-5 * max(1.0, float(y.abs().max()))
        nudge = inputs(self.module, (t, d), seed=seed + 1) * scale
        worst_other = 0.0
        for i in range(t):
            x2 = x.clone()
            x2[0, i] += nudge[i]
            change = (forward(self.module, x2) - y).abs().flatten(2).amax(dim=-1)  # [B, T]
            own = float(change[0, i])
            change[0, i] = 0.0
            other = float(change.max())
            worst_other = max(worst_other, other)
            if other > tol:
                b, j = divmod(int(change.argmax()), t)
                where = f"row {j}" if b == 0 else f"row {j} of another sequence in the batch"
                return (
                    f"perturbing token {i} also changed output {where} (by {num(other)}): "
                    "the output at one position depends on other tokens"
                )
            if own <= tol:
                return f"perturbing token {i} did not change output row {i}"
        token = inputs(self.module, (d,), seed=seed + 2) * scale
        same = forward(self.module, token.expand(2, t, d).clone())
        spread = (same - same[:, :1]).abs().flatten(2).amax(dim=-1)  # [B, T]
        if float(spread.max()) > tol:
            j = int(spread[0].argmax())
            return (
                f"the same token gave different outputs at positions 0 and {j} "
                f"(by {num(float(spread.max()))}): the weights differ between positions"
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
                findings.append(f"a [T, T] tensor {fmt(squares[0])} in {what}")
            elif t in event.across:
                shape = event.inputs[0] if event.inputs else ()
                findings.append(f"{what} across the T axis (size {t}) of {fmt(shape)}")
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
            forward(self.module, inputs(self.module, (2, t, d), seed=30 + i))
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
            f"{name} {fmt(tuple(p.shape))}"
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
        x = inputs(self.module, (2, self.setup.lengths[0], d), seed=40)
        self.module.eval()
        gap = float((forward(self.module, x) - forward(self.module, x)).abs().max())
        if gap != 0.0:
            return False, (
                f"two eval-mode calls on the same input differ by up to {num(gap)}: "
                "something random (dropout?) is on in eval; use nn.Dropout or "
                "F.dropout(h, p, training=self.training)"
            )
        self.module.train()
        with watching(self.module) as events:
            gap_train = float((forward(self.module, x) - forward(self.module, x)).abs().max())
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
            f"(two calls differ by up to {num(gap_train)})"
        )

    # -- residual_ready ---------------------------------------------------------------
    def residual_ready(self) -> tuple[bool, str]:
        """The output's last dimension is d_model, so x + FFN(x) is defined."""
        d = self.setup.d_model
        x = inputs(self.module, (2, self.setup.lengths[0], d), seed=50)
        self.module.eval()
        y = forward(self.module, x)
        width = y.shape[-1] if y.dim() else None
        if width != d:
            return False, (
                f"output {fmt(y.shape)}: its last dim {width} is not d_model={d}, so "
                f"x + FFN(x) is undefined (the down-projection W2 maps d_ff back to d_model)"
            )
        if y.shape != x.shape:
            return False, f"output {fmt(y.shape)}: x + FFN(x) would broadcast {fmt(x.shape)}"
        carried = self._carried_input()
        if carried is not None:
            return False, (
                f"output {fmt(y.shape)} has last dim {d} = d_model, but it already contains "
                f"{num(carried[0])}·x (see no_residual_inside): the block's x + FFN(x) "
                "would add x twice"
            )
        return (
            True,
            f"output {fmt(y.shape)}: last dim {d} = d_model, x + FFN(x) is {fmt(x.shape)}",
        )


def _dropout_probability(module: nn.Module, events: list[Event]) -> float | None:
    """The largest dropout probability the module has (submodules or functional calls)."""
    ps = [e.p for e in events if e.p is not None and e.p > 0]
    for sub in module.modules():
        p = getattr(sub, "p", None)
        if "dropout" in type(sub).__name__.lower() and isinstance(p, float) and p > 0:
            ps.append(p)
    return max(ps) if ps else None
