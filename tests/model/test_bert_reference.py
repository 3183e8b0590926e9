"""Our BERT encoder and our PositionwiseFeedForward against Hugging Face `transformers`.

The reference is `transformers.BertModel` loaded from the same package folder, offline
(HF_HUB_OFFLINE=1, local_files_only=True). Forward hooks catch the input of layer L's
`intermediate` (the FFN's input) and the output of its `output.dense` (the FFN's output,
before dropout, residual and LayerNorm). Skipped only off CI when a package is missing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from app.model.ffn import PositionwiseFeedForward
from app.model.pretrained import is_available, model_dir


def _require(module: str) -> None:
    ok = is_available() if module == "weights" else _importable(module)
    if ok:
        return
    message = f"{module} is not installed (needed for the reference test)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


SENTENCES = [
    "The cat sat on the mat.",
    "Feed-forward layers are key-value memories, unbelievably!",
    "Paris is the capital of France",
]
LAYERS = [0, 3, 5]


@pytest.fixture(scope="module")
def reference():  # type: ignore[no-untyped-def]
    _require("weights")
    _require("transformers")
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import BertModel

    model = BertModel.from_pretrained(str(model_dir()), local_files_only=True)
    model.eval()
    return model


@pytest.fixture(scope="module")
def ours():  # type: ignore[no-untyped-def]
    _require("weights")
    from app.model.pretrained import get_pretrained

    return get_pretrained()


def _hf_layer(reference, ids: torch.Tensor, layer: int) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    caught: dict[str, torch.Tensor] = {}
    block = reference.encoder.layer[layer]
    hooks = [
        block.intermediate.register_forward_hook(
            lambda m, args, out: caught.__setitem__("ffn_input", args[0].detach().clone())
        ),
        block.output.dense.register_forward_hook(
            lambda m, args, out: caught.__setitem__("ffn_output", out.detach().clone())
        ),
        block.register_forward_hook(
            lambda m, args, out: caught.__setitem__(
                "layer_output", (out[0] if isinstance(out, tuple) else out).detach().clone()
            )
        ),
    ]
    try:
        with torch.no_grad():
            reference(input_ids=ids[None, :])
    finally:
        for hook in hooks:
            hook.remove()
    return {k: v[0] for k, v in caught.items()}


@pytest.mark.slow
@pytest.mark.parametrize("layer", LAYERS, ids=lambda n: f"layer{n}")
@pytest.mark.parametrize("sentence", SENTENCES[:2], ids=["cat", "memories"])
def test_our_ffn_equals_transformers_ffn(reference, ours, sentence: str, layer: int) -> None:  # type: ignore[no-untyped-def]
    ids = ours.encode(sentence).ids
    hf = _hf_layer(reference, ids, layer)
    # Our FFN on the reference's own FFN input: the FFN alone, with the real weights.
    ffn: PositionwiseFeedForward = ours.encoder.layer(layer).ffn
    with torch.inference_mode():
        trace = ffn.trace(hf["ffn_input"])
    # float32 sums of 1536 products: the last bits depend on the GEMM's blocking, which
    # differs between the two libraries' layouts; outputs reach |y| ~ 10, so 1e-5 absolute
    # plus 1e-6 relative (a few float32 ulps at that magnitude)
    np.testing.assert_allclose(trace.output.numpy(), hf["ffn_output"].numpy(), atol=1e-5, rtol=1e-6)
    # GELU (erf) of x W1 + b1 by NumPy, an independent path for the hidden activations.
    x = hf["ffn_input"].numpy().astype(np.float64)
    w1 = ffn.weights().w1.numpy().astype(np.float64)
    b1 = ffn.weights().b1.numpy().astype(np.float64)  # type: ignore[union-attr]
    z = x @ w1 + b1
    from math import erf

    gelu = z * 0.5 * (1.0 + np.vectorize(erf)(z / np.sqrt(2.0)))
    # float32 against float64: 384-term sums reach |z| ~ 25, where 1e-5 is a few ulps
    np.testing.assert_allclose(trace.hidden.numpy(), gelu, atol=1e-5, rtol=1e-6)
    # Our whole encoder up to that layer: same FFN input, FFN output and layer output.
    # Through several layers float32 rounding grows with the magnitude (BERT has outlier
    # features near 200), so here 1e-5 is absolute plus relative.
    mine = ours.encoder.run_to(ids, layer)
    for name in ("ffn_input", "ffn_output", "layer_output"):
        np.testing.assert_allclose(
            getattr(mine, name).numpy(), hf[name].numpy(), atol=1e-5, rtol=1e-5, err_msg=name
        )


@pytest.mark.slow
def test_all_layers_match_in_one_pass(reference, ours) -> None:  # type: ignore[no-untyped-def]
    ids = ours.encode(SENTENCES[2]).ids
    with torch.no_grad():
        expected = reference(input_ids=ids[None, :]).last_hidden_state[0].numpy()
    traces = ours.encoder.hidden_states(ids)
    assert len(traces) == 6
    np.testing.assert_allclose(traces[-1].layer_output.numpy(), expected, atol=1e-5, rtol=1e-5)


def test_ffn_weights_are_transposed_into_paper_orientation(ours) -> None:  # type: ignore[no-untyped-def]
    from safetensors import safe_open

    ffn = ours.encoder.layer(2).ffn
    weights = ffn.weights()
    assert tuple(weights.w1.shape) == (384, 1536)
    assert tuple(weights.w2.shape) == (1536, 384)
    with safe_open(str(model_dir() / "model.safetensors"), "pt") as f:
        stored = f.get_tensor("encoder.layer.2.intermediate.dense.weight")  # [1536, 384]
    assert torch.equal(weights.w1, stored.T)


def test_tokenizer_shows_special_tokens_and_does_not_pad(ours) -> None:  # type: ignore[no-untyped-def]
    encoded = ours.encode("Hello world")
    assert encoded.tokens == ["[CLS]", "hello", "world", "[SEP]"]
    assert encoded.special == [True, False, False, True]
    assert encoded.ids.dtype == torch.int64


def test_layer_out_of_range_raises(ours) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"layer must be in \[0, 5\], got 6"):
        ours.encoder.run_to(ours.encode("hi").ids, 6)
