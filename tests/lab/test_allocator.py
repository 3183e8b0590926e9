"""glibc malloc tuning at start-up (`app.services.allocator`)."""

from __future__ import annotations

import pytest

from app.config import Settings
from app.services import allocator


@pytest.mark.skipif(allocator._libc() is None, reason="not glibc")
def test_tune_applies_both_settings_on_glibc() -> None:
    defaults = Settings()
    applied = allocator.tune(defaults.malloc_arena_max, defaults.malloc_mmap_threshold_bytes)
    assert applied == {"arena_max": True, "mmap_threshold": True}


def test_zero_leaves_glibc_alone() -> None:
    assert allocator.tune(0, 0) == {"arena_max": False, "mmap_threshold": False}


def test_a_threshold_over_glibc_maximum_is_refused_by_settings() -> None:
    with pytest.raises(ValueError, match="malloc_mmap_threshold_bytes"):
        Settings(malloc_mmap_threshold_bytes=1 << 26)
