"""A thread-safe LRU cache of seeded weights, bounded by bytes (not by count)."""

from __future__ import annotations

import threading

from cachetools import LRUCache

from app.model.ffn import FFNWeights

WeightKey = tuple[int, int, int, bool, bool]
"""(d_model, d_ff, seed, gated, bias)"""


class WeightCache:
    """Seeded `FFNWeights` by (d_model, d_ff, seed, gated, bias), at most `max_bytes` held.

    A set of weights larger than `max_bytes` is built and returned but not kept.
    """

    def __init__(self, max_bytes: int) -> None:
        self._lock = threading.Lock()
        self._cache: LRUCache[WeightKey, FFNWeights] = LRUCache(
            maxsize=max(max_bytes, 1), getsizeof=lambda w: max(w.nbytes, 1)
        )

    def get(self, d_model: int, d_ff: int, seed: int, *, gated: bool, bias: bool) -> FFNWeights:
        """The seeded weights for this key, built on a miss (see `FFNWeights.seeded`)."""
        key: WeightKey = (d_model, d_ff, seed, gated, bias)
        with self._lock:
            found = self._cache.get(key)
        if found is not None:
            return found
        weights = FFNWeights.seeded(d_model, d_ff, seed, gated=gated, bias=bias)
        with self._lock:
            if weights.nbytes <= self._cache.maxsize:
                self._cache[key] = weights
        return weights

    @property
    def current_bytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return int(self._cache.currsize)

    @property
    def max_bytes(self) -> int:
        """The bound."""
        return int(self._cache.maxsize)
