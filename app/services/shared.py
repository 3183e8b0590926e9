"""Process-wide state for callers without a server (the notebook API, scripts).

The server makes its own `WeightCache` in its lifespan (app.main); a Python session gets one
here, of the same class and the same byte bound (`weight_cache_bytes`), made on first use.
"""

from __future__ import annotations

from functools import lru_cache

from app.config import get_settings
from app.services.weight_cache import WeightCache


@lru_cache(maxsize=1)
def default_cache() -> WeightCache:
    """The session's weight cache (seeded weights and models, LRU by bytes)."""
    return WeightCache(get_settings().weight_cache_bytes)
