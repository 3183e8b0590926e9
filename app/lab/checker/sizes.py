"""The second, unusual pair of sizes every module check also runs at.

A module that passes at the sizes asked for (often the paper's 512 -> 2048) but fails at
d_model 24, d_ff 72 ignores its constructor's arguments somewhere: `nn.Linear(512, 2048)`
typed into the code. The merged result names the pair it failed at and, when the second
module still holds one of the first sizes in a parameter's shape, says it was typed in.
"""

from __future__ import annotations

from torch import nn

from app.grading.report import CannotCheck, CheckResult
from app.lab.checker.basics import Setup
from app.lab.checker.build import Recipe
from app.lab.checker.checks import TRANSPOSED_HINT, Checks

_PAIRS = ((24, 72), (20, 52), (28, 84))


def second_sizes(d_model: int, d_ff: int | None) -> tuple[int, int | None]:
    """(d_model, d_ff) unlike the given ones (no size in common); d_ff None stays None."""
    # three pairs with no size in common: at most two of them meet d_model or d_ff
    d2, f2 = next(p for p in _PAIRS if not set(p) & {d_model, d_ff})
    return d2, (None if d_ff is None else f2)


def _pair(d_model: int, d_ff: int | None) -> str:
    return f"d_model={d_model}" + ("" if d_ff is None else f", d_ff={d_ff}")


def typed_in(module: nn.Module, first: tuple[int, int | None]) -> str | None:
    """`w_1.weight [2048, 24]` when a parameter of `module` (built at the second sizes)
    still has one of the first sizes, else None."""
    sizes = {s for s in first if s is not None}
    for name, p in module.named_parameters():
        if sizes & set(p.shape):
            return f"{name} {list(p.shape)}"
    return None


def at_second_sizes(
    results: list[CheckResult],
    recipe: Recipe,
    first: tuple[int, int | None],
    pair: tuple[int, int | None],
    names: tuple[str, ...],
) -> list[CheckResult]:
    """Run the module checks again on a module built at `pair`; a check passes only when
    it passes at both sizes (a failure at `pair` is named as such)."""
    where = _pair(*pair)
    try:
        second = recipe.build(**recipe.at_sizes(*pair))
    except CannotCheck as exc:
        return [
            r if not r.passed else CheckResult(r.name, False, f"at {where}: {exc}") for r in results
        ]
    again = {r.name: r for r in Checks(second, Setup.for_sizes(*pair)).run(names)}
    hint = typed_in(second, first)
    merged = []
    for r in results:
        other = again.get(r.name)
        if other is None or not r.passed:
            merged.append(r)
        elif other.passed:
            merged.append(r)  # the report's sizes say both pairs were tried
        else:
            head = f"passes at {_pair(*first)} but not at {where}"
            detail = other.detail
            if hint is not None:
                detail = detail.replace(TRANSPOSED_HINT, "")  # the typed size is the reason
                head += (
                    f", where the module still has {hint}: sizes typed into the code? "
                    "build the layers from the constructor's arguments (nn.Linear(d_model, "
                    "d_ff), not nn.Linear(512, 2048))"
                )
            merged.append(CheckResult(r.name, False, f"{head}. At {where}: {detail}"))
    return merged
