"""raises_on_bad_activation: an unknown activation name raises ValueError, also under -O.

The constructor is called with `activation="not_an_activation"` (under the class's own
parameter name) here and again in a `python -O` subprocess, where `assert` statements are
stripped: a check written with `assert` raises AssertionError here and something else (or
nothing) there. The CLI's worker does the -O run in its own process instead, by compiling
the file as -O would (`build.load_class(..., optimize=True)`), so torch is imported once.
An error at the first forward call is accepted too (a lazy lookup).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from app.grading.report import CheckResult
from app.lab.checker.build import Recipe, load_class
from app.lab.checker.trace import torch_float

BAD_NAME = "not_an_activation"
NAME = "raises_on_bad_activation"


@dataclass(frozen=True)
class Source:
    """Where the class can be imported from again (for the `python -O` run).

    Attributes:
        path: the .py file that defines the class.
        class_name: its (dotted) name in that file.
    """

    path: Path
    class_name: str


def outcome(recipe: Recipe, d_model: int) -> dict[str, str]:
    """Build with the bad name (then run one forward); what happened, as plain strings.

    Returns:
        {"error": exception class name or "", "message": ..., "when": "constructor",
        "forward" or ""}. Only ValueError subclasses report "ValueError".
    """
    if recipe.activation_param is None:
        raise ValueError(f"{recipe.cls.__name__}() takes no activation name")
    try:
        module = recipe.cls(**{**recipe.kwargs, recipe.activation_param: BAD_NAME})
    except Exception as exc:
        return _describe(exc, "constructor")
    try:
        with torch.no_grad():
            module(torch.zeros(1, 2, d_model, dtype=torch_float(module)))
    except Exception as exc:
        return _describe(exc, "forward")
    return {"error": "", "message": "", "when": ""}


def _describe(exc: Exception, when: str) -> dict[str, str]:
    kind = "ValueError" if isinstance(exc, ValueError) else type(exc).__name__
    return {"error": kind, "message": str(exc)[:200], "when": when}


def check_activation(
    recipe: Recipe | None,
    d_model: int,
    source: Source | None,
    timeout: float = 120.0,
    *,
    optimize_here: bool = False,
) -> CheckResult:
    """The raises_on_bad_activation check (n/a without a constructor taking a name).

    Args:
        recipe: how the module was built (None for an instance: n/a).
        d_model: the token width for the forward call.
        source: the file and class, for the -O run (None: the -O run is not tried).
        timeout: seconds for a `python -O` subprocess.
        optimize_here: compile the file as -O would in this process instead of starting
            `python -O` (the CLI's worker, which runs the student's code anyway).
    """
    if recipe is None:
        return CheckResult(
            NAME,
            True,
            "not applicable: an instance was given, so no new one can be built "
            "with a bad activation name (pass the class to check this)",
            skipped=True,
        )
    param = recipe.activation_param
    if param is None:
        return CheckResult(
            NAME, True, "not applicable: the constructor takes no activation name", skipped=True
        )
    call = f"{recipe.cls.__name__}({param}={BAD_NAME!r})"
    here = outcome(recipe, d_model)
    flags = " (this Python runs with -O)" if sys.flags.optimize else ""
    if here["error"] != "ValueError":
        return CheckResult(NAME, False, _wrong(call, here, flags))
    if source is None:
        optimized: dict[str, str] | str = (
            "python -O not tried: the class has no importable source file"
        )
    elif optimize_here:
        optimized = _outcome_compiled_optimized(source, recipe, d_model)
    else:
        optimized = _outcome_under_optimize(source, recipe, d_model, timeout)
    if isinstance(optimized, str):
        return CheckResult(NAME, True, f"{call} raises ValueError{flags}; {optimized}")
    if optimized["error"] != "ValueError":
        return CheckResult(NAME, False, _wrong(call, optimized, " under python -O"))
    where = "" if here["when"] == "constructor" else " (at the first forward call)"
    return CheckResult(
        NAME, True, f"{call} raises ValueError{where}, also under python -O: {here['message']!r}"
    )


def _wrong(call: str, seen: dict[str, str], flags: str) -> str:
    if not seen["error"]:
        return f"{call} was accepted without an error{flags}: raise ValueError naming the choices"
    message = f" ({seen['message']!r})" if seen["message"] else ""
    hint = (
        "; use raise ValueError(...): python -O removes assert"
        if seen["error"] == "AssertionError"
        else "; raise ValueError naming the supported activations"
    )
    return f"{call} raised {seen['error']}{message} in the {seen['when']}{flags}{hint}"


def _outcome_under_optimize(
    source: Source, recipe: Recipe, d_model: int, timeout: float
) -> dict[str, str] | str:
    """Run `outcome` in `python -O -m app.lab.checker.worker`; a str when it cannot run."""
    from app.grading.runner import worker_command

    spec = {
        "mode": "activation",
        "path": str(source.path),
        "class_name": source.class_name,
        "kwargs": _jsonable(recipe.kwargs),
        "activation_param": recipe.activation_param,
        "d_model": d_model,
    }
    if spec["kwargs"] is None:
        return "python -O not tried: the constructor arguments are not JSON"
    with tempfile.TemporaryDirectory(prefix="ffn-lab-check-") as tmp:
        out = Path(tmp) / "out.json"
        command, env = worker_command(spec, out, optimize=True)
        try:
            subprocess.run(  # noqa: S603  (our own worker, fixed arguments)
                command, env=env, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return f"python -O run did not finish within {timeout:g} s"
        if not out.is_file():
            return "python -O run ended without an answer"
        answer: dict[str, Any] = json.loads(out.read_text())
    if "error_text" in answer:
        return f"python -O run could not build it: {answer['error_text']}"
    return {k: str(answer[k]) for k in ("error", "message", "when")}


def _outcome_compiled_optimized(
    source: Source, recipe: Recipe, d_model: int
) -> dict[str, str] | str:
    """`outcome` with the class compiled from its file as `python -O` would compile it."""
    from app.grading.report import CannotCheck

    try:
        cls = load_class(source.path, source.class_name, optimize=True)
    except CannotCheck as exc:
        return f"python -O run could not build it: {exc}"
    stripped = Recipe(cls, recipe.kwargs, recipe.d_ff_param, recipe.activation_param)
    return outcome(stripped, d_model)


def _jsonable(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    try:
        json.dumps(kwargs)
    except (TypeError, ValueError):
        return None
    return kwargs
