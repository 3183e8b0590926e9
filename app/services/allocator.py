"""glibc malloc settings for a long-running server that frees big tensors: bounded RSS.

torch's CPU tensors come from glibc's malloc. Two of its defaults kept freed memory in the
process: one arena per thread that ever allocated (8 light + 1 heavy workers, the matmul
pool, the event loop: up to 8 x cores arenas), and a *dynamic* mmap threshold that rises
to the size of the largest block freed (up to 32 MiB), after which mid-size tensors are
carved from the arenas and stay there, fragmented, after they are freed. Measured with
`python -m benchmarks.bench_memory` (benchmarks/README.md): RSS after 200 random requests
1.65 GB with the defaults, 1.24 GB with 2 arenas and a fixed 1 MiB threshold (blocks of
1 MiB or more are mmap'd and go back to the system when freed).

`tune(arena_max, mmap_threshold)` applies them with `mallopt` at start-up (before the
worker threads exist); 0 leaves glibc's default. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def tune(arena_max: int, mmap_threshold: int) -> dict[str, bool]:
    """Set glibc's M_ARENA_MAX and M_MMAP_THRESHOLD (0: leave that one alone).

    Returns which settings were applied (False where glibc is absent or refused)."""
    libc = _libc()
    applied = {"arena_max": False, "mmap_threshold": False}
    if libc is None:
        return applied
    if arena_max > 0:
        applied["arena_max"] = bool(libc.mallopt(M_ARENA_MAX, arena_max))
    if mmap_threshold > 0:
        applied["mmap_threshold"] = bool(libc.mallopt(M_MMAP_THRESHOLD, mmap_threshold))
    return applied
