"""Big maps split over threads (`app.model.parallel`, the maps of the "fast" executor) give
the unsplit numbers, bit for bit."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import torch

from app.model import FFNConfig, PositionwiseFeedForward, parallel
from app.model import ffn as ffn_module
from app.model.fast_ffn import fast_trace, install


@pytest.fixture
def restore_workers() -> Iterator[None]:
    before, threads = parallel.workers(), torch.get_num_threads()
    executor = ffn_module.executor()
    torch.set_num_threads(1)  # splits happen only in a thread with one torch thread
    yield
    parallel.set_workers(before)
    torch.set_num_threads(threads)
    ffn_module.use_executor(executor)


def trace_with(workers: int, model: PositionwiseFeedForward, x: torch.Tensor) -> list[torch.Tensor]:
    parallel.set_workers(workers)
    with torch.inference_mode():
        trace = fast_trace(model, x)
    return [
        t for t in (trace.pre_activation, trace.up, trace.hidden, trace.output) if t is not None
    ]


@pytest.mark.parametrize(
    ("d_model", "d_ff", "activation", "bias", "tokens"),
    [
        (1024, 4096, "relu", True, 1),
        (1024, 4096, "relu", True, 7),
        (1024, 4096, "gelu", True, 32),
        (4096, 11008, "swiglu", False, 8),
        (4096, 11008, "swiglu", False, 64),
    ],
)
def test_split_maps_are_bit_identical_to_one_thread(
    restore_workers: None, d_model: int, d_ff: int, activation: str, bias: bool, tokens: int
) -> None:
    assert d_model * d_ff >= parallel.MIN_SPLIT_WEIGHTS  # these maps are split
    model = PositionwiseFeedForward(FFNConfig(d_model, d_ff, activation, bias), seed=3)
    x = torch.randn(tokens, d_model, generator=torch.Generator().manual_seed(tokens))
    whole = trace_with(1, model, x)
    split = trace_with(2, model, x)
    assert all(torch.equal(a, b) for a, b in zip(whole, split, strict=True))
    nudged = x.clone()
    nudged[tokens // 2] += 1.0
    after = trace_with(2, model, nudged)
    others = [i for i in range(tokens) if i != tokens // 2]
    assert torch.equal(split[-1][others], after[-1][others])  # still position-wise


def test_big_maps_run_on_the_pool_and_small_ones_in_the_caller(
    restore_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    parallel.set_workers(2)
    threads: list[str] = []
    real = parallel.kernel

    def spy(*args: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    big, small = torch.nn.Linear(1024, 4096), torch.nn.Linear(64, 256)
    with torch.inference_mode():
        x = torch.randn(4, 1024)
        whole = real(x, big.weight, big.bias)
        monkeypatch.setattr(parallel, "kernel", spy)
        assert torch.equal(parallel.linear(x, big), whole)
        assert len(threads) == 2 and all(t.startswith("ffn-matmul") for t in threads)
        threads.clear()
        monkeypatch.setattr(parallel, "kernel", real)
        real_linear = parallel.F.linear

        def spy_linear(*args: torch.Tensor) -> torch.Tensor:
            threads.append(threading.current_thread().name)
            return real_linear(*args)

        monkeypatch.setattr(parallel.F, "linear", spy_linear)
        parallel.linear(torch.randn(4, 64), small)
    assert threads == [threading.current_thread().name]  # not split: one call, in this thread


def test_split_is_skipped_while_autograd_records(restore_workers: None) -> None:
    parallel.set_workers(2)
    layer = torch.nn.Linear(1024, 4096)
    x = torch.randn(2, 1024, requires_grad=True)
    out = parallel.linear(x, layer)
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


def test_a_caller_with_more_torch_threads_does_not_split(
    restore_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    parallel.set_workers(2)
    torch.set_num_threads(2)
    monkeypatch.setattr(parallel, "_get_pool", lambda: pytest.fail("split"))
    with torch.inference_mode():
        parallel.linear(torch.randn(4, 1024), torch.nn.Linear(1024, 4096))


def test_a_module_with_hooks_is_called_whole(restore_workers: None) -> None:
    parallel.set_workers(2)
    layer = torch.nn.Linear(1024, 4096)
    seen: list[torch.Tensor] = []
    layer.register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
    with torch.inference_mode():
        x = torch.randn(3, 1024)
        parallel.linear(x, layer)
    assert len(seen) == 1 and seen[0] is x


def test_work_in_the_pool_is_not_split_again(restore_workers: None) -> None:
    parallel.set_workers(2)
    layer = torch.nn.Linear(1024, 4096)
    x = torch.randn(2, 1024)
    with torch.inference_mode():  # four nested splits on two threads would deadlock
        a, b = parallel.both(
            lambda: parallel.linear(x, layer), lambda: parallel.linear(x, layer), 1 << 22
        )
    assert torch.equal(a, b)


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers must be >= 1"):
        parallel.set_workers(0)


def test_the_misconceptions_checks_give_the_same_numbers_split_or_not(
    restore_workers: None,
) -> None:
    from app.config import Settings
    from app.lab.contrast import misconceptions
    from app.lab.spec.specs import PerturbSpec
    from app.services.weight_cache import WeightCache

    spec = PerturbSpec(d_model=1024, d_ff=4096, activation="swiglu", bias=True, num_tokens=3)
    cache, settings = WeightCache(10**9), Settings()
    answers = []
    for workers in (1, 2):
        install(workers)
        answers.append(misconceptions(spec, cache, settings))
    one, two = answers
    for key in ("additivity_gap", "no_activation_gap", "no_activation_bilinear_gap"):
        assert one[key] == two[key], key
    assert one["no_activation_features_checked"] == two["no_activation_features_checked"] > 1


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_big_maps_run_on_onednn_and_match_numpy(
    restore_workers: None, monkeypatch: pytest.MonkeyPatch, activation: str
) -> None:
    """The fast executor runs big maps on oneDNN's linear (`parallel.kernel`) on the seeded
    weights as they are, and give the float64 NumPy reference's numbers to float32 precision;
    submitted weights in another layout take F.linear and give the same numbers."""
    import numpy as np

    from app.model import FFNWeights
    from tests import reference

    assert parallel._ONEDNN is not None
    calls: list[tuple[int, ...]] = []
    real = parallel._ONEDNN

    def spy(x: torch.Tensor, w: torch.Tensor, *rest: object) -> torch.Tensor:
        calls.append(tuple(w.shape))
        return real(x, w, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(parallel, "_ONEDNN", spy)
    config = FFNConfig(1024, 4096, activation, True)
    model = PositionwiseFeedForward(config, seed=5)
    x = torch.randn(3, 1024, generator=torch.Generator().manual_seed(2))
    parallel.set_workers(2)
    with torch.inference_mode():
        trace = fast_trace(model, x)
    # gated: gate and up whole, one thread each; else W1 in two blocks; W2 in two blocks
    assert len(calls) == 4
    w = model.weights()

    def f64(t: torch.Tensor | None) -> np.ndarray | None:
        return None if t is None else t.numpy().astype(np.float64)

    ref = reference.ffn(
        f64(x), f64(w.w1), f64(w.b1), f64(w.w2), f64(w.b2), activation, f64(w.w_gate),
        f64(w.b_gate),
    )  # fmt: skip
    for name in ("pre_activation", "hidden", "output"):
        np.testing.assert_allclose(getattr(trace, name).numpy(), ref[name], rtol=1e-5, atol=1e-5)
    # the same weights contiguous in the paper's [in, out]: F.linear (sgemm), not oneDNN
    calls.clear()
    paper = FFNWeights(
        w1=w.w1.contiguous(), b1=w.b1, w2=w.w2.contiguous(), b2=w.b2,
        w_gate=None if w.w_gate is None else w.w_gate.contiguous(), b_gate=w.b_gate,
    )  # fmt: skip
    with torch.inference_mode():
        other = fast_trace(PositionwiseFeedForward(config, paper), x)
    assert calls == []
    torch.testing.assert_close(other.output, trace.output, rtol=1e-5, atol=1e-5)
