"""The checker's answer: one `CheckResult` per check, a `CheckReport` that prints as a table.

The check names are a contract (autograders key on them): shapes, position_wise,
no_token_mixing, shared_parameters, eval_deterministic, residual_ready,
raises_on_bad_activation, nonlinear, no_residual_inside (new checks are appended). The
JSON form is `{"passed": bool, "status": ..., "sizes": [...], "module": ...,
"checks": [{"name", "passed", "status", "detail", "reason", "skipped"}, ...]}`.

Plain Python only (no torch): the CLI's parent process imports this module.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The course's one-line reason for each check, in checklist order.
REASONS: dict[str, str] = {
    "shapes": "the FFN maps d_model -> d_ff -> d_model, for any batch size B and length T",
    "position_wise": (
        "FFN(x) is applied to each position separately and identically (Vaswani et al. 2017, eq. 2)"
    ),
    "no_token_mixing": "joining tokens is attention's job: the FFN makes no [T, T] matrix",
    "shared_parameters": "one W1, b1, W2, b2 for every position, whatever the length T",
    "eval_deterministic": "dropout acts in training only; evaluation must be repeatable",
    "residual_ready": "the sub-layer's output is added to its input: x + FFN(x)",
    "raises_on_bad_activation": (
        "a user's mistake gets raise ValueError; assert vanishes under python -O"
    ),
    "nonlinear": (
        "without an activation between W1 and W2 the FFN is one linear map: act(x W1 + b1)"
    ),
    "no_residual_inside": (
        "the block adds the residual, x + FFN(x); an FFN that adds x itself adds it twice"
    ),
}
CHECK_NAMES: tuple[str, ...] = tuple(REASONS)
STATUSES = ("passed", "failed", "not_applicable")


class CannotCheck(ValueError):
    """The checklist cannot run: missing file or class, import or constructor error, timeout.

    The message names the problem in a student's words; the CLI exits with code 2.
    """


def select(only: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The checks to run, in checklist order: all of them, or those named in `only`.

    Raises:
        CannotCheck: a name that is not a check (the known names are listed).
    """
    if not only:
        return CHECK_NAMES
    unknown = [n for n in only if n not in REASONS]
    if unknown:
        raise CannotCheck(f"no check {unknown[0]!r}; the checks are {', '.join(CHECK_NAMES)}")
    return tuple(n for n in CHECK_NAMES if n in only)


@dataclass(frozen=True)
class CheckResult:
    """One check of the checklist.

    Attributes:
        name: a key of `REASONS` (stable, e.g. "position_wise").
        passed: True when the module passes (also when the check does not apply).
        detail: what was measured, in words a student reads, with the number.
        skipped: True when the check does not apply (e.g. no activation argument).
    """

    name: str
    passed: bool
    detail: str
    skipped: bool = False

    @property
    def reason(self) -> str:
        """The course's one-line reason for this check."""
        return REASONS.get(self.name, "")

    @property
    def status(self) -> str:
        """ "passed", "failed" or "not_applicable" (the JSON's `status`)."""
        if self.skipped:
            return "not_applicable"
        return "passed" if self.passed else "failed"

    @property
    def mark(self) -> str:
        """The table's column: "pass", "FAIL" or "n/a" (a check that does not apply)."""
        return {"passed": "pass", "failed": "FAIL", "not_applicable": "n/a"}[self.status]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: name, passed, status, detail (plus reason and skipped).

        `passed` stays true for a check that does not apply (as it always was); `status`
        tells "not_applicable" apart.
        """
        return {
            "name": self.name,
            "passed": self.passed,
            "status": self.status,
            "detail": self.detail,
            "reason": self.reason,
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class CheckReport:
    """The checklist's result for one module.

    Attributes:
        subject: what was checked, e.g. "PositionwiseFeedForward(d_model=512, d_ff=2048)".
        checks: one `CheckResult` per check run, in `CHECK_NAMES` order.
        sizes: the (d_model, d_ff) pairs the module was built and checked at: the ones
            asked for, then a second, unusual pair (none for an instance); d_ff is None
            when the constructor takes no hidden width.
    """

    subject: str
    checks: tuple[CheckResult, ...]
    sizes: tuple[tuple[int, int | None], ...] = ()

    @property
    def passed(self) -> bool:
        """True when every check passes."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[str]:
        """The names of the checks that fail."""
        return [c.name for c in self.checks if not c.passed]

    def __getitem__(self, name: str) -> CheckResult:
        """The result of the check called `name`; KeyError naming the known checks."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; the checks are {', '.join(CHECK_NAMES)}")

    @property
    def not_applicable(self) -> list[str]:
        """The names of the checks that do not apply to this module."""
        return [c.name for c in self.checks if c.skipped]

    def to_dict(self) -> dict[str, Any]:
        """`{"passed", "status", "checks": [...], "module", "sizes"}` for autograders."""
        return {
            "passed": self.passed,
            "status": "passed" if self.passed else "failed",
            "checks": [c.to_dict() for c in self.checks],
            "module": self.subject,
            "sizes": [{"d_model": d, "d_ff": f} for d, f in self.sizes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckReport:
        """The inverse of `to_dict` (the CLI reads the worker's answer with it)."""
        checks = tuple(
            CheckResult(
                name=str(c["name"]),
                passed=bool(c["passed"]),
                detail=str(c["detail"]),
                skipped=bool(c.get("skipped", False)),
            )
            for c in data["checks"]
        )
        sizes = tuple(
            (int(s["d_model"]), None if s["d_ff"] is None else int(s["d_ff"]))
            for s in data.get("sizes", ())
        )
        return cls(subject=str(data.get("module", "")), checks=checks, sizes=sizes)

    def summary(self) -> str:
        """One line: how many checks pass (of those that apply), which fail, which do not apply."""
        applied = [c for c in self.checks if not c.skipped]
        n_pass = sum(c.passed for c in applied)
        line = f"{n_pass} of {len(applied)} checks pass"
        if self.not_applicable:
            line += f" ({len(self.not_applicable)} not applicable)"
        if self.sizes:
            line += " at " + " and ".join(_pair(d, f) for d, f in self.sizes)
        if self.failed:
            line += f"; failed: {', '.join(self.failed)}"
        return line

    def __str__(self) -> str:
        """A plain-text table: check, result, measured, why (one line per check)."""
        rows = [("check", "result", "measured", "why")]
        rows += [(c.name, c.mark, c.detail, c.reason) for c in self.checks]
        w_name = max(len(r[0]) for r in rows)
        w_status = max(len(r[1]) for r in rows)
        w_detail = min(max(len(r[2]) for r in rows), 100)  # longer details push "why" on
        lines = [f"ffn-lab check: {self.subject}"]
        for name, status, detail, reason in rows:
            line = f"{name:<{w_name}}  {status:<{w_status}}  {detail:<{w_detail}}  {reason}"
            lines.append(line.rstrip())
        lines.append(self.summary())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The same table as HTML, for Jupyter."""
        head = "".join(f"<th>{h}</th>" for h in ("check", "result", "measured", "why"))
        body = []
        for c in self.checks:
            colour = "#1a7f37" if c.passed else "#cf222e"
            cells = (
                f"<td><code>{html.escape(c.name)}</code></td>"
                f'<td style="color:{colour};font-weight:bold">{html.escape(c.mark)}</td>'
                f"<td>{html.escape(c.detail)}</td><td>{html.escape(c.reason)}</td>"
            )
            body.append(f"<tr>{cells}</tr>")
        return (
            f"<p><b>ffn-lab check</b>: <code>{html.escape(self.subject)}</code></p>"
            f'<table style="text-align:left"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
            f"<p>{html.escape(self.summary())}</p>"
        )


def _pair(d_model: int, d_ff: int | None) -> str:
    return f"d_model={d_model}" + ("" if d_ff is None else f", d_ff={d_ff}")
