"""The FFN's executors: "fast" (the server's) gives eager's numbers, the readable forms give
eager's numbers, and the executor is chosen outside the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from fastapi.testclient import TestClient

from app.model import FFNConfig, PositionwiseFeedForward, parallel
from app.model import ffn as ffn_module
from app.model.fast_ffn import fast_trace, install
from app.model.ffn import FFN_EXECUTORS, eager_trace, use_executor

ACTIVATIONS = ["relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu", "geglu_tanh"]


@pytest.fixture
def restore_executor() -> Iterator[None]:
    before, workers = ffn_module.executor(), parallel.workers()
    yield
    use_executor(before)
    parallel.set_workers(workers)


def _fields(trace: ffn_module.FFNTrace) -> dict[str, torch.Tensor]:
    names = ("pre_activation", "up", "hidden", "dropped", "kept", "output")
    return {n: getattr(trace, n) for n in names if getattr(trace, n) is not None}


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_fast_gives_eager_bits_below_the_onednn_size(
    activation: str, bias: bool, train: bool
) -> None:
    """Below `MIN_SPLIT_WEIGHTS` both executors run F.linear: every tensor bit for bit."""
    config = FFNConfig(5, 13, activation, bias, dropout=0.25 if train else 0.0)
    model = PositionwiseFeedForward(config, seed=4).train(train)
    x = torch.randn(7, 5, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        eager = _fields(eager_trace(model, x, dropout_seed=3))
        fast = _fields(fast_trace(model, x, dropout_seed=3))
    assert eager.keys() == fast.keys()
    for name, tensor in eager.items():
        assert torch.equal(tensor, fast[name]), name
    assert ("dropped" in eager) == train


@pytest.mark.parametrize(
    ("d_model", "d_ff", "activation"), [(1024, 4096, "relu"), (1024, 4096, "swiglu")]
)
def test_fast_matches_eager_at_the_onednn_size(d_model: int, d_ff: int, activation: str) -> None:
    """At oneDNN's size the kernels differ (oneDNN against MKL's sgemm): last bits only."""
    assert d_model * d_ff >= parallel.MIN_SPLIT_WEIGHTS
    model = PositionwiseFeedForward(FFNConfig(d_model, d_ff, activation), seed=2)
    x = torch.randn(3, d_model, generator=torch.Generator().manual_seed(5))
    with torch.inference_mode():
        eager, fast = eager_trace(model, x), fast_trace(model, x)
    torch.testing.assert_close(fast.output, eager.output, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_the_readable_form_computes_the_eager_numbers(activation: str) -> None:
    """`plain()` (FeedForward / GatedFeedForward) shares the maps and gives eager's bits."""
    model = PositionwiseFeedForward(FFNConfig(5, 13, activation), seed=8)
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(2))
    plain = model.plain()
    expected = "GatedFeedForward" if model.config.gated else "FeedForward"
    assert type(plain).__name__ == expected
    with torch.inference_mode():
        assert torch.equal(plain(x), eager_trace(model, x).output)
    assert all(p.device.type == "cpu" for p in plain.parameters())


def test_the_module_runs_the_executor_in_use(restore_executor: None) -> None:
    calls: list[str] = []

    def spy(ffn: PositionwiseFeedForward, x: torch.Tensor, seed: int | None) -> object:
        calls.append("spy")
        return eager_trace(ffn, x, seed)

    FFN_EXECUTORS["spy"] = spy  # type: ignore[assignment]
    try:
        use_executor("spy")
        model = PositionwiseFeedForward(FFNConfig(4, 8), seed=0)
        model(torch.zeros(2, 4))
        model.trace(torch.zeros(2, 4))
    finally:
        del FFN_EXECUTORS["spy"]
    assert calls == ["spy", "spy"]


def test_an_unknown_executor_is_refused_with_the_known_ones(restore_executor: None) -> None:
    with pytest.raises(ValueError, match=r"unknown FFN executor 'cuda'.*'eager'.*'fast'"):
        use_executor("cuda")


def test_the_server_installs_the_fast_executor(restore_executor: None) -> None:
    from app.main import create_app

    use_executor("eager")
    with TestClient(create_app()):
        assert ffn_module.executor() == "fast"


def test_install_sets_the_workers(restore_executor: None) -> None:
    install(1)
    assert parallel.workers() == 1 and ffn_module.executor() == "fast"
    with pytest.raises(ValueError, match="workers must be >= 1"):
        install(0)


def test_eager_maps_are_module_calls_that_hooks_see() -> None:
    """The eager path calls each `nn.Linear` as a module: a hook on W2 sees what W2 gets."""
    model = PositionwiseFeedForward(FFNConfig(5, 13, "gelu", dropout=0.5), seed=1).train()
    seen: list[torch.Tensor] = []
    model.w2.register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
    with torch.inference_mode():
        trace = eager_trace(model, torch.randn(3, 5), dropout_seed=2)
    assert len(seen) == 1 and torch.equal(seen[0], trace.kept)
    assert type(model.w1) is torch.nn.Linear and type(model.w2) is torch.nn.Linear
