"""A thread-safe LRU cache of seeded weights and the models built on them, bounded by bytes.

One entry per (d_model, d_ff, seed, gated, bias) holds the seeded `FFNWeights` and the
`PositionwiseFeedForward` modules built on them (one per activation and dropout), which
share the weights' storage: an entry costs its weights' bytes, whatever the number of
models. Building an nn.Module per request costs more than the forward pass of a small FFN,
so the models are cached too.

Memory bound: entries are evicted before a new one is built, so the cache never holds more
than `max_bytes`; and seeded builds run one at a time, so at most one uncached set of
weights is being made at any moment (two students asking for LLaMA-7B at once do not
build it twice).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from cachetools import LRUCache

from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward

WeightKey = tuple[int, int, int, bool, bool]
"""(d_model, d_ff, seed, gated, bias)"""

ModelKey = tuple[str, float]
"""(activation, dropout)"""


@dataclass
class _Entry:
    weights: FFNWeights
    models: dict[ModelKey, PositionwiseFeedForward] = field(default_factory=dict)


def _entry_size(entry: _Entry) -> int:
    return max(entry.weights.nbytes, 1)


def _seeded_bytes(d_model: int, d_ff: int, *, gated: bool, bias: bool) -> int:
    """float32 bytes that `FFNWeights.seeded(d_model, d_ff, ..., gated, bias).nbytes` holds."""
    matrices = (3 if gated else 2) * d_model * d_ff
    biases = ((2 if gated else 1) * d_ff + d_model) if bias else 0
    return 4 * (matrices + biases)


class WeightCache:
    """Seeded `FFNWeights` (and models) by (d_model, d_ff, seed, gated, bias), at most
    `max_bytes` of weights held.

    A set of weights larger than `max_bytes` is built and returned but not kept.
    """

    def __init__(self, max_bytes: int) -> None:
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._cache: LRUCache[WeightKey, _Entry] = LRUCache(
            maxsize=max(max_bytes, 1), getsizeof=_entry_size
        )

    def _entry(self, key: WeightKey) -> _Entry:
        with self._lock:
            found = self._cache.get(key)
        if found is not None:
            return found
        with self._build_lock:
            with self._lock:  # built by another thread while this one waited?
                found = self._cache.get(key)
            if found is not None:
                return found
            d_model, d_ff, seed, gated, bias = key
            need = _seeded_bytes(d_model, d_ff, gated=gated, bias=bias)
            with self._lock:  # make room first: old and new weights never both held here
                while self._cache and self._cache.currsize + need > self._cache.maxsize:
                    self._cache.popitem()
            weights = FFNWeights.seeded(d_model, d_ff, seed, gated=gated, bias=bias)
            entry = _Entry(weights)
            with self._lock:
                if weights.nbytes <= self._cache.maxsize:
                    self._cache[key] = entry
            return entry

    def get(self, d_model: int, d_ff: int, seed: int, *, gated: bool, bias: bool) -> FFNWeights:
        """The seeded weights for this key, built on a miss (see `FFNWeights.seeded`)."""
        return self._entry((d_model, d_ff, seed, gated, bias)).weights

    def model(self, config: FFNConfig, seed: int) -> PositionwiseFeedForward:
        """The FFN for `config` with the weights seeded by `seed`, built at most once while
        cached. Its train/eval mode is fixed: train (dropout active) iff config.dropout > 0.
        Callers must not change the module: it is shared between requests."""
        entry = self._entry((config.d_model, config.d_ff, seed, config.gated, config.bias))
        key: ModelKey = (config.activation, config.dropout)
        with self._lock:
            model = entry.models.get(key)
        if model is None:
            model = PositionwiseFeedForward(config, entry.weights)
            model.train(config.dropout > 0)
            with self._lock:
                model = entry.models.setdefault(key, model)
        return model

    @property
    def current_bytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return int(self._cache.currsize)

    @property
    def max_bytes(self) -> int:
        """The bound."""
        return int(self._cache.maxsize)
