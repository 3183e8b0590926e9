"""Gradescope's results.json from a `CheckReport`, with per-check weights from a TA file.

Format (Gradescope's autograder specification, "Output format"): a top-level `score`
and `output`, and `tests[]` with `name`, `score`, `max_score`, `status` ("passed" or
"failed"), `output` and `visibility` ("visible", "hidden", "after_due_date",
"after_published"). A check that does not apply is left out of `tests[]`: the format's
status has no third value, and a test with max_score 0 would still read as passed. It is
named in the top-level output and in `extra_data.not_applicable`.

The TA file (TOML, read with tomllib):

    [defaults]                 # optional; weight 1 and "visible" without it
    weight = 1.0
    visibility = "visible"

    [checks.nonlinear]         # any check by name
    weight = 2.0
    visibility = "after_due_date"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.grading.report import CHECK_NAMES, CannotCheck, CheckReport

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


@dataclass(frozen=True)
class Weight:
    """One check's points and who sees it on Gradescope."""

    weight: float = 1.0
    visibility: str = "visible"


@dataclass(frozen=True)
class Weights:
    """Per-check weights and visibility (the TA file), with defaults for the rest."""

    default: Weight = Weight()
    checks: dict[str, Weight] = field(default_factory=dict)

    def of(self, name: str) -> Weight:
        """The weight and visibility of the check called `name`."""
        return self.checks.get(name, self.default)


def _weight(table: Any, where: str, base: Weight) -> Weight:
    if not isinstance(table, dict):
        raise CannotCheck(f"{where} must be a table like [{where}] with weight = 1.0")
    unknown = sorted(set(table) - {"weight", "visibility"})
    if unknown:
        raise CannotCheck(f"{where}: unknown key {unknown[0]!r}; use weight and visibility")
    weight = table.get("weight", base.weight)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
        raise CannotCheck(f"{where}.weight must be a number >= 0, got {weight!r}")
    visibility = table.get("visibility", base.visibility)
    if visibility not in VISIBILITIES:
        raise CannotCheck(
            f"{where}.visibility must be one of {', '.join(VISIBILITIES)}, got {visibility!r}"
        )
    return Weight(float(weight), str(visibility))


def load_weights(path: Path) -> Weights:
    """Read the TA's weights file.

    Raises:
        CannotCheck: no such file, not TOML, an unknown check or key, a negative weight
            or an unknown visibility (each named).
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CannotCheck(f"no such weights file: {path}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CannotCheck(f"cannot read the weights file {path}: {exc}") from exc
    unknown = sorted(set(data) - {"defaults", "checks"})
    if unknown:
        raise CannotCheck(f"{path}: unknown table {unknown[0]!r}; use [defaults] and [checks.NAME]")
    default = _weight(data.get("defaults", {}), "defaults", Weight())
    checks_table = data.get("checks", {})
    if not isinstance(checks_table, dict):
        raise CannotCheck(f"{path}: checks must be tables like [checks.nonlinear]")
    checks = {}
    for name, table in checks_table.items():
        if name not in CHECK_NAMES:
            raise CannotCheck(f"{path}: no check {name!r}; the checks are {', '.join(CHECK_NAMES)}")
        checks[name] = _weight(table, f"checks.{name}", default)
    return Weights(default, checks)


def results_json(report: CheckReport, weights: Weights | None = None) -> dict[str, Any]:
    """Gradescope's results.json for one checked file (n/a checks left out of tests[])."""
    weights = weights or Weights()
    tests: list[dict[str, Any]] = []
    score = 0.0
    for check in report.checks:
        if check.skipped:
            continue
        w = weights.of(check.name)
        score += w.weight if check.passed else 0.0
        tests.append(
            {
                "name": check.name,
                "score": w.weight if check.passed else 0.0,
                "max_score": w.weight,
                "status": "passed" if check.passed else "failed",
                "output": f"{check.detail}\n\nWhy: {check.reason}",
                "visibility": w.visibility,
            }
        )
    output = f"ffn-lab check: {report.subject}\n{report.summary()}"
    skipped = [c for c in report.checks if c.skipped]
    if skipped:
        output += "\nNot scored (not applicable): " + "; ".join(
            f"{c.name}: {c.detail}" for c in skipped
        )
    return {
        "score": score,
        "output": output,
        "tests": tests,
        "extra_data": {
            "module": report.subject,
            "sizes": [{"d_model": d, "d_ff": f} for d, f in report.sizes],
            "not_applicable": [c.name for c in skipped],
        },
    }


def cannot_run_json(message: str) -> dict[str, Any]:
    """results.json when the checklist cannot run: score 0 and the reason for the student."""
    return {"score": 0.0, "output": f"ffn-lab check could not run: {message}", "tests": []}
