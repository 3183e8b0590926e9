"""The checklist for a student's own FFN: `lab.check(...)` and `ffn-lab check`.

Modules: `build` (load a file, match the constructor), `trace` (forward hooks and a
TorchFunctionMode that see every intermediate tensor), `checks` (eight checks on a
module), `structure` (the measurements behind nonlinear and no_residual_inside),
`parameters` (the parameter formula), `sizes` (the second, unusual pair of sizes),
`activation` (raises_on_bad_activation, under -O too), `worker` (the CLI's subprocess).
The report, the CLI and the runner live in `app.grading` (no torch there).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from torch import nn

from app.grading.report import CHECK_NAMES, CannotCheck, CheckReport, CheckResult, select
from app.lab.checker.activation import NAME as ACTIVATION_CHECK
from app.lab.checker.activation import Source, check_activation
from app.lab.checker.basics import Setup
from app.lab.checker.build import Recipe, recipe
from app.lab.checker.checks import Checks
from app.lab.checker.sizes import at_second_sizes, second_sizes

__all__ = ["CHECK_NAMES", "CannotCheck", "CheckReport", "CheckResult", "check", "run_checks"]


def run_checks(
    module: nn.Module,
    *,
    d_model: int,
    d_ff: int | None = None,
    recipe: Recipe | None = None,
    source: Source | None = None,
    only: list[str] | tuple[str, ...] | None = None,
    optimize_here: bool = False,
) -> CheckReport:
    """Run the checks on a built module (the CLI's worker and `check` both call this).

    With a recipe, a second module is built at an unusual pair of sizes (e.g. d_model 24,
    d_ff 72) and every module check runs on it too: a check passes only when it passes
    at both, so sizes typed into the code fail, with a message saying so.

    Args:
        module: the FFN, taking float [B, T, d_model].
        d_model: the token width.
        d_ff: the hidden width asked for (taken from `recipe` when it has one).
        recipe: how `module` was built; without one raises_on_bad_activation is n/a and
            only these sizes are tried.
        source: the file defining the class, for the -O run.
        only: run only these checks (all when None).
        optimize_here: do the -O run in this process (the CLI's worker).

    Raises:
        CannotCheck: `only` names an unknown check.
    """
    names = select(only)
    if recipe is not None and recipe.d_ff_param is not None:
        d_ff = int(recipe.kwargs[recipe.d_ff_param])
    subject = recipe.describe() if recipe is not None else f"a {type(module).__name__} instance"
    results = Checks(module, Setup.for_sizes(d_model, d_ff)).run(names)
    sizes: list[tuple[int, int | None]] = [(d_model, d_ff)]
    if recipe is not None and recipe.d_model_param is not None and results:
        pair = second_sizes(d_model, d_ff)
        results = at_second_sizes(results, recipe, (d_model, d_ff), pair, names)
        sizes.append(pair)
    if ACTIVATION_CHECK in names:
        results.append(check_activation(recipe, d_model, source, optimize_here=optimize_here))
    order = {name: i for i, name in enumerate(CHECK_NAMES)}
    results.sort(key=lambda r: order[r.name])
    return CheckReport(subject=subject, checks=tuple(results), sizes=tuple(sizes))


def check(
    module_or_class: nn.Module | type[nn.Module],
    d_model: int | None = None,
    d_ff: int | None = None,
    kwargs: dict[str, Any] | None = None,
    *,
    only: list[str] | tuple[str, ...] | None = None,
) -> CheckReport:
    """Run the FFN checklist on a module instance or class, in this process.

    A class is built with d_model and d_ff under its own parameter names (d_model, dim,
    n_embd, hidden_size, ...; d_ff, hidden_dim, n_inner, intermediate_size, ffn_dim,
    d_inner, ...) plus `kwargs`, and again at a second, unusual pair of sizes; an
    instance is checked as it is, at its own sizes (then raises_on_bad_activation does
    not apply).

    Args:
        module_or_class: an `nn.Module` subclass or instance; forward takes
            float32 [B, T, d_model] and should return [B, T, d_model].
        d_model: token width (default 512 for a class; required for an instance).
        d_ff: hidden width (default 2048 for a class; optional for an instance).
        kwargs: more constructor arguments, e.g. {"dropout": 0.1}.
        only: run only these checks, e.g. ["nonlinear"] (all when None).

    Returns:
        A `CheckReport`: `.passed`, `.checks` (each `.name`, `.passed`, `.status`,
        `.detail`), `.sizes`, printed as a table (`str`, and HTML in Jupyter).

    Raises:
        CannotCheck (a ValueError): the constructor cannot be called or raised, or `only`
            names an unknown check.
        ValueError: an instance without d_model.
    """
    if isinstance(module_or_class, nn.Module):
        if d_model is None:
            raise ValueError("lab.check(instance) needs d_model=..., the width of one token vector")
        if kwargs:
            raise ValueError("kwargs are constructor arguments: pass the class, not an instance")
        return run_checks(module_or_class, d_model=d_model, d_ff=d_ff, only=only)
    d_model = 512 if d_model is None else d_model
    d_ff = 2048 if d_ff is None else d_ff
    built = recipe(module_or_class, d_model, d_ff, kwargs)
    return run_checks(
        built.build(), d_model=d_model, recipe=built, source=_source(built.cls), only=only
    )


def _source(cls: type[nn.Module]) -> Source | None:
    """The file `cls` can be imported from again, or None (notebook, local class)."""
    if "<locals>" in cls.__qualname__:
        return None
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    if path is None or not Path(path).is_file():
        return None
    return Source(Path(path), cls.__qualname__)
