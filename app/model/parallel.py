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


def linear(x: Tensor, layer: nn.Linear) -> Tensor:
    """`layer(x)`, float32 [..., in] -> [..., out], its output features split over the pool
    when the map is big (see the module docstring); otherwise `layer(x)` itself."""
    if not _splits(x, layer):
        out: Tensor = layer(x)
        return out
    weight, bias = layer.weight, layer.bias  # [out, in] (a view of [in, out] storage), [out]
    size = weight.shape[0]
    step = -(-size // _workers)
    pool = _get_pool()

    def block(start: int) -> Callable[[], Tensor]:
        part = None if bias is None else bias[start : start + step]
        return lambda: F.linear(x, weight[start : start + step], part)

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
    """`a @ w` for a [..., k] and w [k, n], w's columns split over the pool when w is big
    (see `both`); each block is the same dot products, so the numbers are `a @ w`'s."""
    if not _may_split(w.numel()) or (
        torch.is_grad_enabled() and (a.requires_grad or w.requires_grad)
    ):
        return a @ w
    size = w.shape[1]
    step = -(-size // _workers)
    pool = _get_pool()

    def block(start: int) -> Callable[[], Tensor]:
        return lambda: a @ w[:, start : start + step]

    futures = [_submit(pool, block(start)) for start in range(0, size, step)]
    return torch.cat([f.result() for f in futures], dim=-1)


def linears(x: Tensor, first: nn.Linear, second: nn.Linear) -> tuple[Tensor, Tensor]:
    """(`first(x)`, `second(x)`), run at once on two pool threads when both maps are big;
    otherwise one after the other. Each map is computed whole, as `layer(x)` would."""
    if not (_splits(x, first) and _splits(x, second)):
        return first(x), second(x)
    pool = _get_pool()
    a = _submit(pool, lambda: first(x))
    b = _submit(pool, lambda: second(x))
    return a.result(), b.result()
