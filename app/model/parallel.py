"""Big linear maps over the cores: a persistent pool of single-threaded torch workers.

float32 sgemm with a handful of rows (T = 8 tokens against LLaMA-7B's 4096 x 11008 matrices)
runs far below both the machine's matmul peak and its memory bandwidth on one thread, and
torch's own OpenMP team stalls on a busy machine (a team waiting for a descheduled thread;
benchmarks/README.md). So a big map is split here into independent pieces that run on a
small pool of threads, each with one torch thread:

- `linear`: the output features (columns of the paper's [in, out] W) are cut into
  `workers()` consecutive blocks, one `F.linear` per block, concatenated. Every output
  number is still the same dot product over the same inputs computed by the same kernel,
  so the result is bit-identical to the unsplit map for the shapes the page uses
  (`tests/model/test_parallel.py` checks it), and row i never depends on another row.
- `linears`: two maps of the same input (a gated FFN's gate and up) run at once, each
  whole.

The kernel (`kernel`): maps of at least `MIN_SPLIT_WEIGHTS` weights, in inference, run on
oneDNN's float32 matmul (`torch.ops.mkldnn._linear_pointwise`, the op torch's own CPU
compiler uses for linear layers) instead of MKL's sgemm: with a handful of rows MKL reads
LLaMA-7B's [4096 x 11008] weights at a third of the memory bandwidth (69 against 23 ms per
matrix at T = 8 on 2 threads; benchmarks/README.md). Still float32 on the same weights, no
copy or re-layout; the last bits differ from sgemm's (~1e-6 relative). Every
big map of an FFN uses it, split or whole, so the numbers of a request never depend on
which path ran it.

Only maps of at least `MIN_SPLIT_WEIGHTS` weights are split (16 MB of float32: LLaMA-7B,
the L size); smaller ones cost less than the hop to another thread. Only a caller with one
torch thread splits (the server's default, `FFN_LAB_TORCH_THREADS=1`): the pool's threads
have one too, so the pieces run the very kernel the caller would, and a request's numbers
never depend on the thread that ran it. With more torch threads torch parallelises the
map itself. Nothing is split while autograd records (training), when the module has forward
hooks (they see the module's own call: the dropout view captures W2's input so), or with
`set_workers(1)`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import torch
import torch.nn.functional as F
from torch import Tensor, nn

MIN_SPLIT_WEIGHTS = 1 << 22
"""Weights (in_features x out_features) from which a map is split over the pool."""

_PREFIX = "ffn-matmul"
_lock = threading.Lock()
_workers = 2
_pool: ThreadPoolExecutor | None = None


_ONEDNN = (
    getattr(torch.ops.mkldnn, "_linear_pointwise", None)
    if torch.backends.mkldnn.is_available()  # type: ignore[no-untyped-call]
    else None
)
"""oneDNN's float32 linear (None when this torch build has no oneDNN: F.linear is used)."""


def _onednn_size(weights: int) -> bool:
    return _ONEDNN is not None and weights >= MIN_SPLIT_WEIGHTS


def _on_onednn(x: Tensor, weight: Tensor, whole: Tensor) -> bool:
    return (
        _onednn_size(whole.numel())
        and weight.is_contiguous()  # [out, in] rows; other strides take a slow path there
        and x.dtype == weight.dtype == torch.float32
        and x.device.type == weight.device.type == "cpu"
        and not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad))
    )


def kernel(x: Tensor, weight: Tensor, bias: Tensor | None, whole: Tensor | None = None) -> Tensor:
    """`F.linear(x, weight, bias)`: x float32 [..., in], weight [out, in] (any strides),
    bias [out] or None -> [..., out]. Big maps in inference run on oneDNN (see the module
    docstring); everything else, and anything autograd records, on `F.linear`. `whole`:
    the map that `weight` is a block of (its size picks the kernel, so that every block
    runs the kernel of the unsplit map)."""
    if _ONEDNN is not None and _on_onednn(x, weight, weight if whole is None else whole):
        # the bias is added apart: fused, oneDNN rounds it in differently for different
        # numbers of output features, and a split map would not match the whole one
        out: Tensor = _ONEDNN(x.contiguous(), weight, None, "none", [], "")
        return out if bias is None else out.add_(bias)
    return F.linear(x, weight, bias)


def laid_out(weight: Tensor) -> Tensor:
    """A paper-orientation matrix [in, out] (the same values, a view when already so) laid
    out for `kernel`: big maps as the transpose of a contiguous [out, in] (the rows oneDNN
    reads), others contiguous [in, out] (MKL's sgemm runs ~30% faster on it with few rows)."""
    if _onednn_size(weight.numel()):
        return weight if weight.T.is_contiguous() else weight.T.contiguous().T
    return weight.contiguous()


class Linear(nn.Linear):
    """`nn.Linear` whose forward is `kernel` (the attention module's maps, so that their
    big maps run on oneDNN too; the FFN's maps are plain `nn.Linear`s and the FFN's
    executor, `app.model.fast_ffn`, calls `kernel` itself)."""

    def forward(self, input: Tensor) -> Tensor:
        return kernel(input, self.weight, self.bias)


def _one_torch_thread() -> None:
    torch.set_num_threads(1)


def set_workers(count: int) -> None:
    """Split big maps over `count` threads (1: never split). Takes effect for new calls."""
    global _workers, _pool
    if count < 1:
        raise ValueError(f"workers must be >= 1, got {count}")
    with _lock:
        if count != _workers and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _workers = count


def workers() -> int:
    """Threads a big map is split over."""
    return _workers


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                _workers, thread_name_prefix=_PREFIX, initializer=_one_torch_thread
            )
        return _pool


def _in_pool() -> bool:
    """True in one of the pool's own threads: work there is never split again (a task
    waiting for tasks queued behind it would wait for ever)."""
    return threading.current_thread().name.startswith(_PREFIX)


def _splits(x: Tensor, layer: nn.Linear) -> bool:
    if _in_pool() or _workers < 2 or layer.weight.numel() < MIN_SPLIT_WEIGHTS:
        return False
    if layer._forward_hooks or layer._forward_pre_hooks:  # a hook must see the real call
        return False
    if torch.get_num_threads() != 1:  # torch splits it itself; and rounding could differ
        return False
    return not (torch.is_grad_enabled() and (x.requires_grad or layer.weight.requires_grad))


def _submit(pool: ThreadPoolExecutor, fn: Callable[[], Tensor]) -> Future[Tensor]:
    """`fn` in the pool under the caller's autograd mode (inference mode is per thread)."""
    inference = torch.is_inference_mode_enabled()
    grad = torch.is_grad_enabled()

    def run() -> Tensor:
        with torch.inference_mode(inference), torch.set_grad_enabled(grad):
            return fn()

    return pool.submit(run)


def _whole(x: Tensor, layer: nn.Linear) -> Tensor:
    """`layer(x)` unsplit, on `kernel`; a layer with hooks is called as a module instead (its
    hooks see the real call; its own forward then picks the kernel)."""
    if layer._forward_hooks or layer._forward_pre_hooks:
        out: Tensor = layer(x)
        return out
    return kernel(x, layer.weight, layer.bias)


def linear(x: Tensor, layer: nn.Linear) -> Tensor:
    """`layer(x)`, float32 [..., in] -> [..., out], on `kernel`, its output features split
    over the pool when the map is big (see the module docstring)."""
    if not _splits(x, layer):
        return _whole(x, layer)
    weight, bias = layer.weight, layer.bias  # [out, in] (a view of [in, out] storage), [out]
    size = weight.shape[0]
    step = -(-size // _workers)
    pool = _get_pool()

    def block(start: int) -> Callable[[], Tensor]:
        part = None if bias is None else bias[start : start + step]
        return lambda: kernel(x, weight[start : start + step], part, whole=weight)

    futures = [_submit(pool, block(start)) for start in range(0, size, step)]
    return torch.cat([f.result() for f in futures], dim=-1)


def _may_split(weights: int) -> bool:
    return (
        _workers >= 2
        and weights >= MIN_SPLIT_WEIGHTS
        and torch.get_num_threads() == 1
        and not _in_pool()
    )


def both(
    first: Callable[[], Tensor], second: Callable[[], Tensor], weights: int
) -> tuple[Tensor, Tensor]:
    """(`first()`, `second()`) at once on two pool threads when they read at least
    `MIN_SPLIT_WEIGHTS` weights each and the caller has one torch thread (the pool's
    threads have one too: the same kernels, the same numbers); else one after the other."""
    if not _may_split(weights):
        return first(), second()
    pool = _get_pool()
    a, b = _submit(pool, first), _submit(pool, second)
    return a.result(), b.result()


def matmul(a: Tensor, w: Tensor) -> Tensor:
    """`a @ w` for a [..., k] and w [k, n] through `kernel` (oneDNN for a big w laid out by
    `laid_out`), w's columns split over the pool when w is big (see `both`); each block is
    the same dot products, so the numbers are the unsplit `kernel`'s."""
    if not _may_split(w.numel()) or (
        torch.is_grad_enabled() and (a.requires_grad or w.requires_grad)
    ):
        return kernel(a, w.T, None)
    size = w.shape[1]
    step = -(-size // _workers)
    pool = _get_pool()

    def block(start: int) -> Callable[[], Tensor]:
        return lambda: kernel(a, w.T[start : start + step], None, whole=w.T)

    futures = [_submit(pool, block(start)) for start in range(0, size, step)]
    return torch.cat([f.result() for f in futures], dim=-1)


def linears(x: Tensor, first: nn.Linear, second: nn.Linear) -> tuple[Tensor, Tensor]:
    """(`first(x)`, `second(x)`) on `kernel`, run at once on two pool threads when both maps
    are big; otherwise one after the other. Each map is computed whole."""
    if not (_splits(x, first) and _splits(x, second)):
        return _whole(x, first), _whole(x, second)
    pool = _get_pool()
    a = _submit(pool, lambda: _whole(x, first))
    b = _submit(pool, lambda: _whole(x, second))
    return a.result(), b.result()
