"""Token buckets by key: `rate` requests per second with bursts of `burst`, per process.

Keys expire after a minute unused, and at most `max_keys` are kept (the oldest go first),
so a flood of new keys cannot grow memory without bound.
"""

from __future__ import annotations

import time

from cachetools import TTLCache

from app.services.sessions.errors import RateLimited


class RateLimiter:
    """`check(key)` raises `RateLimited` when the key's bucket is empty."""

    def __init__(self, rate: float, burst: float, what: str, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self.what = what
        self._buckets: TTLCache[object, tuple[float, float]] = TTLCache(max_keys, ttl=60)

    def check(self, key: object) -> None:
        """Take one token from `key`'s bucket.

        Raises:
            RateLimited: the bucket is empty; says how long to wait.
        """
        now = time.monotonic()
        tokens, then = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens < 1:
            wait = (1 - tokens) / self.rate
            self._buckets[key] = (tokens, now)
            raise RateLimited(
                f"Too many {self.what}: at most {self.rate:g} per second "
                f"(bursts of {self.burst:g}). Try again in {wait:.1f} s.",
                retry_after=wait,
            )
        self._buckets[key] = (tokens - 1, now)
