"""Load a student's class from a file and build the module with d_model, d_ff and kwargs.

The constructor's parameters are matched by the names courses and libraries use
(d_model, dim, hidden_size, ... for the token width; d_ff, hidden, dim_feedforward, ...
for the hidden width); `kwargs` fill or override any parameter.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch import nn

from app.grading.report import CannotCheck

__all__ = ["CannotCheck", "Recipe", "load_class", "recipe"]

D_MODEL_NAMES = (
    "d_model", "dim", "d_in", "model_dim", "dim_model", "hidden_size", "n_embd", "embed_dim",
    "embedding_dim", "in_features", "input_dim", "d_input", "n_embed", "emb_dim", "size",
)  # fmt: skip
D_FF_NAMES = (
    "d_ff", "dim_feedforward", "d_hidden", "d_hid", "hidden_dim", "hidden", "d_inner",
    "ffn_dim", "dim_ff", "ff_dim", "d_ffn", "intermediate_size", "hidden_features",
    "inner_dim", "mlp_dim", "n_hidden", "hidden_units", "ffn_hidden", "n_inner", "d_mlp",
    "n_state", "inner_size", "ffn_hidden_size", "mlp_hidden_dim", "dim_hidden", "d_inner_hid",
    "filter_size", "intermediate_dim",
)  # fmt: skip
ACTIVATION_NAMES = (
    "activation", "act", "activation_fn", "act_fn", "activation_name", "act_name",
    "activation_function", "nonlinearity", "hidden_act", "non_linearity",
)  # fmt: skip


@dataclass(frozen=True)
class Recipe:
    """How to build the module: the class and the keyword arguments it gets.

    Attributes:
        cls: the student's class (an `nn.Module` subclass).
        kwargs: constructor keyword arguments (d_model/d_ff under the class's own names).
        d_ff_param: the name the constructor takes d_ff under, or None if it takes none.
        activation_param: the parameter that takes an activation *name*, or None.
        d_model_param: the name the constructor takes d_model under, or None.
    """

    cls: type[nn.Module]
    kwargs: dict[str, Any] = field(default_factory=dict)
    d_ff_param: str | None = None
    activation_param: str | None = None
    d_model_param: str | None = None

    def at_sizes(self, d_model: int, d_ff: int | None) -> dict[str, int]:
        """The constructor arguments that set these sizes (for `build(**...)`)."""
        sizes = {} if self.d_model_param is None else {self.d_model_param: d_model}
        if self.d_ff_param is not None and d_ff is not None:
            sizes[self.d_ff_param] = d_ff
        return sizes

    def describe(self, **override: Any) -> str:
        """`ClassName(d_model=16, d_ff=64)`, as a student would write the call."""
        args = ", ".join(f"{k}={v!r}" for k, v in {**self.kwargs, **override}.items())
        return f"{self.cls.__name__}({args})"

    def build(self, **override: Any) -> nn.Module:
        """Call the constructor (with `override` on top of `kwargs`).

        Raises:
            CannotCheck: the constructor raised, or returned something that is not a module.
        """
        call = self.describe(**override)
        try:
            module = self.cls(**{**self.kwargs, **override})
        except Exception as exc:
            raise CannotCheck(f"{call} raised {_error_line(exc)}") from exc
        if not isinstance(module, nn.Module):
            raise CannotCheck(f"{call} returned {type(module).__name__}, not a torch.nn.Module")
        return module


def recipe(
    cls: type[nn.Module], d_model: int, d_ff: int, kwargs: dict[str, Any] | None = None
) -> Recipe:
    """Match `cls`'s constructor parameters to d_model, d_ff and `kwargs`.

    Raises:
        CannotCheck: `cls` is not an nn.Module subclass, a required parameter cannot be
            filled, or `kwargs` names a parameter the constructor does not take.
    """
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise CannotCheck(f"{getattr(cls, '__name__', cls)!r} is not a torch.nn.Module class")
    kwargs = dict(kwargs or {})
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError) as exc:
        raise CannotCheck(f"cannot read the constructor of {cls.__name__}: {exc}") from exc
    named = {n: p for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = [k for k in kwargs if k not in named and not takes_any]
    if unknown:
        raise CannotCheck(
            f"{cls.__name__}() takes no parameter {unknown[0]!r}; "
            f"it takes: {', '.join(named) or 'nothing'}"
        )
    d_model_param = _first(named, D_MODEL_NAMES)
    d_ff_param = _first(named, D_FF_NAMES, exclude=d_model_param)
    built: dict[str, Any] = {}
    if d_model_param is None and d_ff_param is None and takes_any:
        d_model_param, d_ff_param = "d_model", "d_ff"  # a **kwargs constructor
    if d_model_param is not None:
        built[d_model_param] = d_model
    if d_ff_param is not None:
        built[d_ff_param] = d_ff
    built.update(kwargs)  # kwargs win
    missing = [
        n for n, p in named.items() if p.default is inspect.Parameter.empty and n not in built
    ]
    if missing:
        raise CannotCheck(
            f"{cls.__name__}() needs {missing[0]!r}, which the checker cannot fill: name the "
            f"token width d_model and the hidden width d_ff, or pass it with "
            f"--kwargs '{{\"{missing[0]}\": ...}}' (lab.check(..., kwargs=...))"
        )
    return Recipe(cls, built, d_ff_param, _activation_param(named), d_model_param)


def _first(
    named: dict[str, inspect.Parameter], names: tuple[str, ...], exclude: str | None = None
) -> str | None:
    for name in names:
        if name in named and name != exclude:
            return name
    return None


def _activation_param(named: dict[str, inspect.Parameter]) -> str | None:
    """The parameter that takes an activation by name (a str default or annotation)."""
    for name in ACTIVATION_NAMES:
        p = named.get(name)
        if p is None:
            continue
        annotation = p.annotation
        if isinstance(annotation, str):
            takes_str = "str" in annotation
        else:
            takes_str = annotation is str or "str" in repr(annotation)
        if isinstance(p.default, str) or takes_str:
            return name
        if p.default is inspect.Parameter.empty and annotation is inspect.Parameter.empty:
            return name
    return None


def load_class(path: Path, class_name: str, *, optimize: bool = False) -> type[nn.Module]:
    """Import `path` as a module (its folder on sys.path) and return `class_name` from it.

    With `optimize`, the file is compiled as `python -O` would (assert statements and
    `if __debug__:` blocks removed) into a module of its own, so the checker sees what
    the class does under -O without starting another Python (files it imports are not
    recompiled).

    Raises:
        CannotCheck: no such file, the import raised (error and line named), no such
            class (the classes found are listed), or it is not an nn.Module subclass.
    """
    path = Path(path)
    if not path.is_file():
        raise CannotCheck(f"no such file: {path}")
    prefix = "ffn_lab_student_O_" if optimize else "ffn_lab_student_"
    spec = importlib.util.spec_from_file_location(f"{prefix}{path.stem}", path)
    if spec is None or spec.loader is None:
        raise CannotCheck(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    sys.modules[spec.name] = module
    try:
        if optimize:
            code = compile(path.read_bytes(), str(path), "exec", optimize=1, dont_inherit=True)
            exec(code, module.__dict__)  # noqa: S102  (the student's file, as -O runs it)
        else:
            spec.loader.exec_module(module)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included: name them
        raise CannotCheck(f"importing {path} raised {_error_line(exc, path)}") from exc
    found: Any = module
    for part in class_name.split("."):
        if not hasattr(found, part):
            classes = sorted(
                n
                for n, v in vars(module).items()
                if isinstance(v, type) and v.__module__ == spec.name
            )
            raise CannotCheck(
                f"{path} has no class {class_name!r}; classes defined there: "
                f"{', '.join(classes) or 'none'}"
            )
        found = getattr(found, part)
    if not (isinstance(found, type) and issubclass(found, nn.Module)):
        raise CannotCheck(f"{class_name} in {path} is not a torch.nn.Module subclass")
    return found


def _error_line(exc: BaseException, path: Path | None = None) -> str:
    """`ValueError: message (line 12)`: the error and, when `path` is given, its line there."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if path is None:
        return text
    line = exc.lineno if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    return f"{text} (line {line})" if line is not None else text
