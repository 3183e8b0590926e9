"""Watch one forward pass: every torch function (TorchFunctionMode) and every submodule
(forward hooks), with the shapes going in and out and the axes each op works across.

Functional code is seen too (`torch.softmax(x @ x.transpose(1, 2), -1)`,
`F.relu`, `x.mean(1)`); ops inside one torch call (e.g. inside
`F.multi_head_attention_forward`) are not, which is why attention is listed by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

Shape = tuple[int, ...]

DROPOUT_OPS = frozenset(
    {"dropout", "dropout_", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
     "feature_alpha_dropout", "feature_dropout"}
)  # fmt: skip
# Ops that combine values along the axes named by a `dim` argument (all axes without one).
_REDUCTIONS = frozenset(
    {"sum", "mean", "nansum", "nanmean", "amax", "amin", "max", "min", "std", "var",
     "std_mean", "var_mean", "prod", "logsumexp", "norm", "softmax", "log_softmax", "softmin",
     "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "median", "nanmedian", "sort",
     "argsort", "topk", "argmax", "argmin", "roll", "flip", "diff", "normalize",
     "count_nonzero", "mode", "kthvalue", "quantile", "nanquantile", "glu"}
)  # fmt: skip
_DIM_POSITION = {"topk": 2, "kthvalue": 2, "roll": 2, "normalize": 2, "quantile": 2,
                 "nanquantile": 2, "norm": 2}  # fmt: skip
_DEFAULT_DIM = {"normalize": 1, "topk": -1, "sort": -1, "argsort": -1, "diff": -1,
                "kthvalue": -1, "glu": -1}  # fmt: skip
_MATMULS = frozenset({"matmul", "mm", "bmm", "__matmul__", "linear", "dot", "inner", "mv"})
_ATTENTION = frozenset({"scaled_dot_product_attention", "multi_head_attention_forward"})
_POOLS = frozenset(
    {"avg_pool1d", "max_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "lp_pool1d"}
)


@dataclass(frozen=True)
class Event:
    """One torch function or submodule call seen during a forward pass.

    Attributes:
        kind: "op" (a torch function or Tensor method) or "module" (a submodule's forward).
        name: the function's name ("softmax", "linear") or "w_2 (Linear)".
        inputs: shapes of the tensor arguments, in order.
        outputs: shapes of the tensors returned.
        across: sizes of the axes the op combines values along (reduced, normalised,
            contracted, convolved); empty for element-wise ops.
        p: the dropout probability, for dropout ops; else None.
        pointers: data pointers of the tensors a matrix product multiplies (so a
            parameter can be told apart as a weight matrix); empty for other ops.
        touched: storage pointers of every tensor the op read (so a parameter the
            forward never uses can be named); empty for submodule events.
    """

    kind: str
    name: str
    inputs: tuple[Shape, ...]
    outputs: tuple[Shape, ...]
    across: tuple[int, ...] = ()
    p: float | None = None
    pointers: tuple[int, ...] = ()
    touched: tuple[int, ...] = ()


def _tensors(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _shapes(value: Any) -> tuple[Shape, ...]:
    return tuple(tuple(t.shape) for t in _tensors(value))


def _func_name(func: Callable[..., Any]) -> str:
    name = getattr(func, "__name__", None) or repr(func)
    return str(name)


def _dims(value: Any, ndim: int) -> list[int] | None:
    """Normalise a `dim` argument to a list of axes, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value % ndim] if ndim else []
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return [v % ndim for v in value] if ndim else []
    return None


def _across(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The sizes of the axes `name(*args, **kwargs)` combines values along."""
    first = next(_tensors(args[:1]), None) if args else kwargs.get("input")
    if not isinstance(first, Tensor):
        return ()
    shape = tuple(first.shape)
    ndim = len(shape)
    if name in _REDUCTIONS:
        if name in ("max", "min") and len(args) > 1 and isinstance(args[1], Tensor):
            return ()  # element-wise maximum of two tensors
        raw = kwargs.get("dim", kwargs.get("dims"))
        pos = _DIM_POSITION.get(name, 1)
        if raw is None and len(args) > pos:
            raw = args[pos]
        if raw is None:
            raw = _DEFAULT_DIM.get(name)
        axes = _dims(raw, ndim) if raw is not None else list(range(ndim))
        return tuple(shape[a] for a in axes or [])
    if name in ("layer_norm", "rms_norm"):
        normalized = args[1] if len(args) > 1 else kwargs.get("normalized_shape", ())
        n = 1 if isinstance(normalized, int) else len(normalized)
        return shape[ndim - n :]
    if name == "group_norm":
        return shape[1:]
    if name == "instance_norm":
        return shape[2:]
    if name in _MATMULS:
        return shape[-1:]
    if name == "__rmatmul__" and len(args) > 1 and isinstance(args[1], Tensor):
        return tuple(args[1].shape)[-1:]
    if name in ("baddbmm", "addmm", "addbmm") and len(args) > 1:
        other = args[1]
        return tuple(other.shape)[-1:] if isinstance(other, Tensor) else ()
    if name == "einsum":
        return _einsum_contracted(args)
    if name in ("conv1d", "conv2d") and len(args) > 1 and isinstance(args[1], Tensor):
        kernel = tuple(args[1].shape)[2:]
        spatial = shape[ndim - len(kernel) :]
        return tuple(s for s, k in zip(spatial, kernel, strict=True) if k > 1)
    if name in _POOLS:
        return shape[-1:]
    if name in _ATTENTION:
        return shape[:-1]
    return ()


def _einsum_contracted(args: tuple[Any, ...]) -> tuple[int, ...]:
    """Sizes of the letters an einsum sums over (in an input, not in the output)."""
    if not args or not isinstance(args[0], str):
        return ()
    equation = args[0].replace(" ", "")
    operands = list(_tensors(args[1:]))
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    sizes: dict[str, int] = {}
    for term, operand in zip(terms, operands, strict=False):
        shape = tuple(operand.shape)
        if "..." in term:
            head, tail = term.split("...")
            letters = list(head) + list(tail)
            dims = list(shape[: len(head)]) + (
                list(shape[len(shape) - len(tail) :]) if tail else []
            )
        else:
            letters, dims = list(term), list(shape)
        sizes.update(zip(letters, dims, strict=False))
    if not rhs and "->" not in equation:
        counts = {c: lhs.count(c) for c in set(re.sub(r"[^a-zA-Z]", "", lhs))}
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    return tuple(size for letter, size in sizes.items() if letter not in rhs)


_PRODUCTS = _MATMULS | {"__rmatmul__", "einsum", "baddbmm", "addmm", "addbmm", "bilinear"}


def _pointers(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
    if name not in _PRODUCTS:
        return ()
    return tuple(t.data_ptr() for t in _tensors((args, kwargs)))


def _dropout_p(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> float | None:
    if name not in DROPOUT_OPS:
        return None
    p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
    training = kwargs.get("training", args[2] if len(args) > 2 else True)
    return float(p) if training and isinstance(p, (int, float)) else 0.0


class _Recorder(TorchFunctionMode):
    """Records every torch function call; with `drop_dropout`, dropout is the identity."""

    def __init__(self, events: list[Event], drop_dropout: bool) -> None:
        super().__init__()
        self.events = events
        self.drop_dropout = drop_dropout

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = _func_name(func)
        if self.drop_dropout and name in DROPOUT_OPS:
            return args[0] if args else kwargs["input"]
        out = func(*args, **kwargs)
        outputs = _shapes(out)
        if outputs:
            self.events.append(
                Event(
                    kind="op",
                    name=name,
                    inputs=_shapes((args, kwargs)),
                    outputs=outputs,
                    across=_across(name, args, kwargs),
                    p=_dropout_p(name, args, kwargs),
                    pointers=_pointers(name, args, kwargs),
                    touched=tuple(storage_pointer(t) for t in _tensors((args, kwargs))),
                )
            )
        return out


@contextmanager
def watching(module: nn.Module, *, drop_dropout: bool = False) -> Iterator[list[Event]]:
    """Record the forward passes run inside the block; yields the list of `Event`s.

    Args:
        module: the module whose submodules get forward hooks (removed on exit).
        drop_dropout: replace dropout ops by the identity (position_wise uses this so
            that random masks do not hide or fake a dependence between positions).
    """
    events: list[Event] = []
    handles = []
    for name, sub in module.named_modules():
        label = f"{name or 'the module'} ({type(sub).__name__})"

        def hook(_m: nn.Module, inputs: Any, output: Any, label: str = label) -> None:
            events.append(Event("module", label, _shapes(inputs), _shapes(output)))

        handles.append(sub.register_forward_hook(hook))
    try:
        with _Recorder(events, drop_dropout):
            yield events
    finally:
        for handle in handles:
            handle.remove()


def hidden_width(events: list[Event], d_model: int) -> tuple[int | None, str]:
    """The FFN's hidden width as the hooks saw it, and where it was found.

    The hidden width is the input width of the last projection back to d_model (a
    `linear`/matmul whose output is d_model wide and whose input is not). Without one
    (e.g. a missing down-projection) it is the most common width other than d_model.
    """
    for event in reversed(events):
        if event.kind != "op" or event.name not in _PRODUCTS:
            continue
        if not event.inputs or not event.outputs or not event.outputs[0]:
            continue
        width_in, width_out = event.inputs[0][-1:], event.outputs[0][-1]
        if width_out == d_model and width_in and width_in[0] != d_model:
            return width_in[0], f"the input of the last {event.name} back to d_model"
    widths: dict[int, int] = {}
    for event in events:
        for shape in event.outputs:
            if len(shape) >= 2 and shape[-1] != d_model:
                widths[shape[-1]] = widths.get(shape[-1], 0) + 1
    if widths:
        return max(widths, key=lambda w: widths[w]), "the most common width other than d_model"
    if any(s[-1:] == (d_model,) for e in events for s in e.outputs):
        return d_model, "no width other than d_model"
    return None, "no tensors"


def module_label(events: list[Event], shape_in: Shape, width_out: int) -> str | None:
    """The submodule that maps `shape_in`'s width to `width_out` (e.g. "w_2 (Linear)")."""
    for event in events:
        if (
            event.kind == "module"
            and event.inputs[:1]
            and event.inputs[0][-1:] == shape_in[-1:]
            and event.outputs[:1]
            and event.outputs[0][-1:] == (width_out,)
            and not event.name.startswith("the module")
        ):
            return event.name
    return None


def storage_pointer(tensor: Tensor) -> int:
    """Where the tensor's storage starts (a view or transpose of a parameter shares it)."""
    return int(tensor.untyped_storage().data_ptr())


def torch_float(module: nn.Module) -> torch.dtype:
    """The floating dtype of the module's first parameter (float32 when it has none)."""
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32
