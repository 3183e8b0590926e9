"""Uploaded layers (POST /api/weights/upload), kept by content hash in a bounded LRU cache.

A forward or perturb request names one by its `weights_id`; the weights never travel as JSON
again. The cache holds at most `upload_cache_bytes` (setting; the server sizes the store at
start-up, `UploadStore.resize`) of float32 weights, least recently used first out; an evicted
or unknown id is a 422 that says to upload again. The store keeps any object with a
`weights` mapping of arrays (the lab's `LayerFile`); it imports nothing of the layers above.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from typing import Protocol

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
"""The store's bound until the server sizes it (the default of `upload_cache_bytes`)."""


class Upload(Protocol):
    """What the store keeps: an uploaded layer's arrays by name."""

    @property
    def weights(self) -> Mapping[str, npt.NDArray[np.float32]]: ...


def _size(layer: Upload) -> int:
    return max(1, sum(a.nbytes for a in layer.weights.values()))


class UploadStore:
    """Thread-safe: id (SHA-256 of the file, 24 hex digits) -> an uploaded layer."""

    def __init__(self, max_bytes: int) -> None:
        self._cache: LRUCache[str, Upload] = LRUCache(maxsize=max(1, max_bytes), getsizeof=_size)
        self._lock = threading.Lock()

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()[:24]

    def put(self, key: str, layer: Upload) -> None:
        with self._lock:
            if _size(layer) <= self._cache.maxsize:
                self._cache[key] = layer

    def get(self, key: str) -> Upload | None:
        with self._lock:
            return self._cache.get(key)

    def resize(self, max_bytes: int) -> None:
        """Bound the store by `max_bytes` from now on (the layers kept so far are dropped)."""
        with self._lock:
            self._cache = LRUCache(maxsize=max(1, max_bytes), getsizeof=_size)


_STORE = UploadStore(DEFAULT_MAX_BYTES)


def upload_store() -> UploadStore:
    """The process-wide store (shared by the server's requests and a notebook session)."""
    return _STORE
