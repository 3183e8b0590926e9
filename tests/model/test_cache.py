"""The weight and model cache: bounded by bytes, models reused, one build per key."""

from __future__ import annotations

import threading

import pytest
import torch

from app.model.ffn import FFNConfig, FFNWeights
from app.services import weight_cache as cache_module
from app.services.weight_cache import WeightCache


def nbytes(d_model: int, d_ff: int) -> int:
    return FFNWeights.seeded(d_model, d_ff, 0, gated=False, bias=True).nbytes


def test_bound_is_in_bytes_and_lru() -> None:
    size = nbytes(16, 64)
    cache = WeightCache(2 * size + 10)
    a = cache.get(16, 64, 1, gated=False, bias=True)
    cache.get(16, 64, 2, gated=False, bias=True)
    assert cache.get(16, 64, 1, gated=False, bias=True) is a  # hit, and now most recent
    cache.get(16, 64, 3, gated=False, bias=True)  # evicts seed 2, the least recent
    assert cache.current_bytes <= cache.max_bytes
    assert cache.get(16, 64, 1, gated=False, bias=True) is a


def test_too_big_is_built_but_not_kept() -> None:
    cache = WeightCache(100)
    w = cache.get(16, 64, 0, gated=False, bias=True)
    assert w.w1.shape == (16, 64)
    assert cache.current_bytes == 0


def test_models_are_reused_and_share_the_weights() -> None:
    cache = WeightCache(10**8)
    relu = cache.model(FFNConfig(8, 32, "relu"), seed=4)
    assert cache.model(FFNConfig(8, 32, "relu"), seed=4) is relu
    gelu = cache.model(FFNConfig(8, 32, "gelu"), seed=4)
    assert gelu is not relu
    assert gelu.w1.weight.data_ptr() == relu.w1.weight.data_ptr()  # one copy of the weights
    assert cache.current_bytes == nbytes(8, 32)
    assert not relu.training
    assert cache.model(FFNConfig(8, 32, "relu", dropout=0.5), seed=4).training
    # the same numbers as a model built from scratch
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(0))
    fresh = FFNWeights.seeded(8, 32, 4, gated=False, bias=True)
    expected = torch.relu(x @ fresh.w1 + fresh.b1) @ fresh.w2 + fresh.b2
    torch.testing.assert_close(relu(x), expected, rtol=0, atol=1e-6)


def test_concurrent_misses_build_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = FFNWeights.seeded

    def counting(*args: object, **kwargs: object) -> FFNWeights:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module.FFNWeights, "seeded", counting)
    cache = WeightCache(10**8)
    results: list[FFNWeights] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(cache.get(64, 256, 9, gated=True, bias=False))
        )
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(r is results[0] for r in results)


def test_room_is_made_before_building() -> None:
    size = nbytes(32, 128)
    cache = WeightCache(size + 10)
    cache.get(32, 128, 0, gated=False, bias=True)
    cache.get(32, 128, 1, gated=False, bias=True)
    assert cache.current_bytes == size  # the old entry went before the new one was made


@pytest.mark.parametrize(("gated", "bias"), [(False, True), (True, True), (True, False)])
def test_size_estimate_is_exact(gated: bool, bias: bool) -> None:
    weights = FFNWeights.seeded(5, 13, 0, gated=gated, bias=bias)
    assert cache_module._seeded_bytes(5, 13, gated=gated, bias=bias) == weights.nbytes
