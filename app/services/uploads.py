"""Uploaded layers (POST /api/weights/upload), kept by content hash in a bounded LRU cache.

A forward or perturb request names one by its `weights_id`; the weights never travel as JSON
again. The cache holds at most `upload_cache_bytes` (setting) of float32 weights, least
recently used first out; an evicted or unknown id is a 422 that says to upload again.
"""

from __future__ import annotations

import hashlib
import threading
from functools import lru_cache

from cachetools import LRUCache

from app.config import get_settings
from app.lab.weight_files import LayerFile


def _size(layer: LayerFile) -> int:
    return max(1, sum(a.nbytes for a in layer.weights.values()))


class UploadStore:
    """Thread-safe: id (SHA-256 of the file, 24 hex digits) -> `LayerFile`."""

    def __init__(self, max_bytes: int) -> None:
        self._cache: LRUCache[str, LayerFile] = LRUCache(maxsize=max(1, max_bytes), getsizeof=_size)
        self._lock = threading.Lock()

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()[:24]

    def put(self, key: str, layer: LayerFile) -> None:
        with self._lock:
            if _size(layer) <= self._cache.maxsize:
                self._cache[key] = layer

    def get(self, key: str) -> LayerFile | None:
        with self._lock:
            return self._cache.get(key)


@lru_cache(maxsize=1)
def upload_store() -> UploadStore:
    """The process-wide store (shared by the server's requests and a notebook session)."""
    return UploadStore(get_settings().upload_cache_bytes)
