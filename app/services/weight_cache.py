"""A thread-safe LRU cache of seeded weights and the models built on them, bounded by bytes.

One entry per (d_model, d_ff, seed) holds the seeded `FFNWeights` and the
`PositionwiseFeedForward` modules built on them (one per activation, dropout and bias),
which share the weights' storage: an entry costs its weights' bytes, whatever the number of
models. Building an nn.Module per request costs more than the forward pass of a small FFN,
so the models are cached too.

One entry serves every variant of its key: `FFNWeights.seeded` draws w1, b1, w2, b2 first
and the gate after them, and draws the biases whatever `bias` says, so the plain weights
are a prefix of the gated ones and `bias=False` only leaves the biases out. An entry is
built with its biases, and with the gate as soon as a gated variant is asked for (it then
replaces the plain entry); the views handed out are the very same tensors. The variants
view (ReLU next to SwiGLU at LLaMA size) thus holds one 541 MB set, not 360 + 541 MB that
would not both fit the default bound and were rebuilt on every call.

Layout (`app.model.parallel.laid_out`): the maps big enough for oneDNN's kernel (LLaMA-7B,
the L size) keep the drawn `nn.Linear` rows [out, in], which that kernel reads at about the
memory bandwidth; smaller matrices are kept contiguous in the paper's orientation [in, out]
(x @ w1), on which MKL's float32 sgemm with 8 rows runs ~30% faster here
(benchmarks/README.md). Either way the tensors handed out are in the paper's orientation.

Memory bound: entries are evicted before a new one is built, so the cache never holds more
than `max_bytes`; and seeded builds run one at a time, so at most one uncached set of
weights is being made at any moment (two students asking for LLaMA-7B at once do not
build it twice).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

from cachetools import LRUCache

from app.model import parallel
from app.model.attention import AttentionWeights
from app.model.ffn import FFNConfig, FFNWeights, PositionwiseFeedForward

WeightKey = tuple[int, int, int]
"""(d_model, d_ff, seed)"""

AttentionKey = tuple[str, int, int]
"""("attention", d_model, seed)"""

ViewKey = tuple[bool, bool]
"""(gated, bias)"""

ModelKey = tuple[str, float, bool]
"""(activation, dropout, bias)"""


@dataclass
class _Entry:
    weights: FFNWeights  # with biases; with the gate iff `gated`
    gated: bool
    views: dict[ViewKey, FFNWeights] = field(default_factory=dict)
    models: dict[ModelKey, PositionwiseFeedForward] = field(default_factory=dict)

    def view(self, gated: bool, bias: bool) -> FFNWeights:
        """The weights of variant (gated, bias): the entry's own tensors, no copy."""
        found = self.views.get((gated, bias))
        if found is None:
            w = self.weights
            found = FFNWeights(
                w1=w.w1,
                b1=w.b1 if bias else None,
                w2=w.w2,
                b2=w.b2 if bias else None,
                w_gate=w.w_gate if gated else None,
                b_gate=w.b_gate if gated and bias else None,
            )
            found = self.views.setdefault((gated, bias), found)
        return found


def _laid_out(weights: FFNWeights) -> FFNWeights:
    """The same values with every matrix laid out for the FFN's kernel (`parallel.laid_out`:
    big maps keep the drawn [out, in] rows, small ones become contiguous [in, out]; one
    matrix copied at a time, so at most one extra matrix is held during the conversion)."""
    for name in ("w1", "w2", "w_gate"):
        tensor = getattr(weights, name)
        if tensor is not None:
            weights = replace(weights, **{name: parallel.laid_out(tensor)})
    return weights


@dataclass
class _AttentionEntry:
    weights: AttentionWeights  # with biases, matrices contiguous [in, out]
    views: dict[bool, AttentionWeights] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in vars(self.weights).values())

    def view(self, bias: bool) -> AttentionWeights:
        found = self.views.get(bias)
        if found is None:
            values = {
                k: (v if bias or k.startswith("w_") else None)
                for k, v in vars(self.weights).items()
            }
            found = self.views.setdefault(bias, AttentionWeights(**values))  # type: ignore[arg-type]
        return found


def _entry_size(entry: _Entry | _AttentionEntry) -> int:
    if isinstance(entry, _AttentionEntry):
        return max(entry.nbytes, 1)
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
        self._cache: LRUCache[WeightKey | AttentionKey, _Entry | _AttentionEntry] = LRUCache(
            maxsize=max(max_bytes, 1), getsizeof=_entry_size
        )

    def _entry(self, key: WeightKey, gated: bool) -> _Entry:
        def usable(entry: _Entry) -> bool:
            return entry.gated or not gated

        with self._lock:
            found = self._cache.get(key)
        if isinstance(found, _Entry) and usable(found):
            return found
        with self._build_lock:
            with self._lock:  # built by another thread while this one waited?
                found = self._cache.get(key)
                if isinstance(found, _Entry) and usable(found):
                    return found
                if found is not None:  # a plain entry: the gated one replaces it
                    del self._cache[key]
            d_model, d_ff, seed = key
            need = _seeded_bytes(d_model, d_ff, gated=gated, bias=True)
            with self._lock:  # make room first: old and new weights never both held here
                while self._cache and self._cache.currsize + need > self._cache.maxsize:
                    self._cache.popitem()
            # No name keeps the drawn tensors: each converted one is freed at once.
            weights = _laid_out(FFNWeights.seeded(d_model, d_ff, seed, gated=gated, bias=True))
            entry = _Entry(weights, gated)
            with self._lock:
                if entry.weights.nbytes <= self._cache.maxsize:
                    self._cache[key] = entry
            return entry

    def get(self, d_model: int, d_ff: int, seed: int, *, gated: bool, bias: bool) -> FFNWeights:
        """The seeded weights for this key, built on a miss (see `FFNWeights.seeded`); the
        same object on every call while cached. Matrices [in, out] (see Layout above)."""
        return self._entry((d_model, d_ff, seed), gated).view(gated, bias)

    def model(self, config: FFNConfig, seed: int) -> PositionwiseFeedForward:
        """The FFN for `config` with the weights seeded by `seed`, built at most once while
        cached. Its train/eval mode is fixed: train (dropout active) iff config.dropout > 0.
        Callers must not change the module: it is shared between requests."""
        entry = self._entry((config.d_model, config.d_ff, seed), config.gated)
        key: ModelKey = (config.activation, config.dropout, config.bias)
        with self._lock:
            model = entry.models.get(key)
            weights = entry.view(config.gated, config.bias)
        if model is None:
            model = PositionwiseFeedForward(config, weights)
            model.train(config.dropout > 0)
            with self._lock:
                model = entry.models.setdefault(key, model)
        return model

    def attention(self, d_model: int, seed: int, *, bias: bool) -> AttentionWeights:
        """The seeded self-attention weights (`AttentionWeights.seeded`) for d_model and
        seed, built on a miss and kept in the same byte bound (4 d_model^2 floats: 268 MB
        at d_model 4096, which took ~1.5 s to draw on every call)."""
        key: AttentionKey = ("attention", d_model, seed)
        with self._lock:
            found = self._cache.get(key)
        if not isinstance(found, _AttentionEntry):
            with self._build_lock:
                with self._lock:
                    found = self._cache.get(key)
                if not isinstance(found, _AttentionEntry):
                    need = 4 * (4 * d_model * d_model + 4 * d_model)
                    with self._lock:
                        while self._cache and self._cache.currsize + need > self._cache.maxsize:
                            self._cache.popitem()
                    drawn = AttentionWeights.seeded(d_model, seed, bias=True)
                    found = _AttentionEntry(
                        AttentionWeights(
                            **{  # type: ignore[arg-type]
                                k: None if v is None else v.contiguous()
                                for k, v in vars(drawn).items()
                            }
                        )
                    )
                    del drawn
                    with self._lock:
                        if found.nbytes <= self._cache.maxsize:
                            self._cache[key] = found
        return found.view(bias)

    @property
    def current_bytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return int(self._cache.currsize)

    @property
    def max_bytes(self) -> int:
        """The bound."""
        return int(self._cache.maxsize)
