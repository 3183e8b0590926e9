"""The checklist for a student's own FFN: `lab.check(...)` and `ffn-lab check`.

Modules: `build` (load a file, match the constructor), `trace` (forward hooks and a
TorchFunctionMode that see every intermediate tensor), `checks` (six checks on a module),
`parameters` (the parameter formula),
`activation` (raises_on_bad_activation, with a `python -O` subprocess), `report` (the
table / JSON), `runner` + `worker` (the CLI's subprocess with a time limit), `cli`.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from torch import nn

from app.lab.checker.activation import Source, check_activation
from app.lab.checker.build import CannotCheck, Recipe, recipe
from app.lab.checker.checks import Checks, Setup
from app.lab.checker.report import CHECK_NAMES, CheckReport, CheckResult

__all__ = ["CHECK_NAMES", "CannotCheck", "CheckReport", "CheckResult", "check", "run_checks"]


def run_checks(
    module: nn.Module,
    *,
    d_model: int,
    d_ff: int | None = None,
    recipe: Recipe | None = None,
    source: Source | None = None,
) -> CheckReport:
    """Run all seven checks on a built module (the CLI's worker and `check` both call this).

    Args:
        module: the FFN, taking float [B, T, d_model].
        d_model: the token width.
        d_ff: the hidden width asked for (taken from `recipe` when it has one).
        recipe: how `module` was built; without one raises_on_bad_activation is n/a.
        source: the file defining the class, for the `python -O` run.
    """
    if recipe is not None and recipe.d_ff_param is not None:
        d_ff = int(recipe.kwargs[recipe.d_ff_param])
    subject = recipe.describe() if recipe is not None else f"a {type(module).__name__} instance"
    results = Checks(module, Setup.for_sizes(d_model, d_ff)).run()
    results.append(check_activation(recipe, d_model, source))
    return CheckReport(subject=subject, checks=tuple(results))


def check(
    module_or_class: nn.Module | type[nn.Module],
    d_model: int | None = None,
    d_ff: int | None = None,
    kwargs: dict[str, Any] | None = None,
) -> CheckReport:
    """Run the FFN checklist on a module instance or class, in this process.

    A class is built with d_model and d_ff under its own parameter names (d_model, dim,
    hidden_size, ...; d_ff, hidden, dim_feedforward, ...) plus `kwargs`; an instance is
    checked as it is (then raises_on_bad_activation does not apply).

    Args:
        module_or_class: an `nn.Module` subclass or instance; forward takes
            float32 [B, T, d_model] and should return [B, T, d_model].
        d_model: token width (default 512 for a class; required for an instance).
        d_ff: hidden width (default 2048 for a class; optional for an instance).
        kwargs: more constructor arguments, e.g. {"dropout": 0.1}.

    Returns:
        A `CheckReport`: `.passed`, `.checks` (each `.name`, `.passed`, `.detail`),
        printed as a table (`str`, and HTML in Jupyter).

    Raises:
        CannotCheck (a ValueError): the constructor cannot be called or raised.
        ValueError: an instance without d_model.
    """
    if isinstance(module_or_class, nn.Module):
        if d_model is None:
            raise ValueError("lab.check(instance) needs d_model=..., the width of one token vector")
        if kwargs:
            raise ValueError("kwargs are constructor arguments: pass the class, not an instance")
        return run_checks(module_or_class, d_model=d_model, d_ff=d_ff)
    d_model = 512 if d_model is None else d_model
    d_ff = 2048 if d_ff is None else d_ff
    built = recipe(module_or_class, d_model, d_ff, kwargs)
    return run_checks(built.build(), d_model=d_model, recipe=built, source=_source(built.cls))


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
