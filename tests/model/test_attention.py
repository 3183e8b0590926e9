"""Self-attention against a NumPy reference and against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.model.attention import AttentionWeights, SelfAttention


def numpy_attention(
    x: np.ndarray, w: AttentionWeights, heads: int
) -> tuple[np.ndarray, np.ndarray]:
    """Vaswani et al. 2017 eq. 1 in float64 NumPy: (weights [h, T, T], output [T, d])."""
    t, d = x.shape
    dk = d // heads

    def proj(wm: torch.Tensor, b: torch.Tensor | None) -> np.ndarray:
        out = x @ wm.numpy().astype(np.float64)
        return out if b is None else out + b.numpy()

    q, k, v = proj(w.w_q, w.b_q), proj(w.w_k, w.b_k), proj(w.w_v, w.b_v)
    weights = np.zeros((heads, t, t))
    context = np.zeros((t, d))
    for h in range(heads):
        sl = slice(h * dk, (h + 1) * dk)
        scores = q[:, sl] @ k[:, sl].T / np.sqrt(dk)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        weights[h] = a
        context[:, sl] = a @ v[:, sl]
    return weights, proj_out(context, w)


def proj_out(context: np.ndarray, w: AttentionWeights) -> np.ndarray:
    out = context @ w.w_o.numpy().astype(np.float64)
    return out if w.b_o is None else out + w.b_o.numpy()


@pytest.mark.parametrize(
    ("d_model", "heads", "t", "bias"),
    [
        pytest.param(5, 1, 4, True, id="odd-single-head"),
        pytest.param(6, 3, 7, True, id="three-heads"),
        pytest.param(16, 4, 6, False, id="no-bias"),
    ],
)
def test_attention_matches_numpy(d_model: int, heads: int, t: int, bias: bool) -> None:
    attn = SelfAttention(d_model, heads, seed=3, bias=bias)
    x = torch.randn(t, d_model, generator=torch.Generator().manual_seed(1))
    trace = attn.trace(x)
    ref_w, ref_out = numpy_attention(x.numpy().astype(np.float64), attn.weights(), heads)
    assert trace.weights.shape == (heads, t, t)
    np.testing.assert_allclose(trace.weights.numpy(), ref_w, atol=1e-5)
    np.testing.assert_allclose(trace.output.numpy(), ref_out, atol=1e-5)
    np.testing.assert_allclose(trace.weights.sum(-1).numpy(), 1.0, atol=1e-6)


def test_attention_matches_torch_multihead_attention() -> None:
    d_model, heads = 8, 2
    attn = SelfAttention(d_model, heads, seed=7)
    w = attn.weights()
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w.w_q.T, w.w_k.T, w.w_v.T]))
        mha.in_proj_bias.copy_(torch.cat([w.b_q, w.b_k, w.b_v]))  # type: ignore[list-item]
        mha.out_proj.weight.copy_(w.w_o.T)
        mha.out_proj.bias.copy_(w.b_o)  # type: ignore[arg-type]
    x = torch.randn(5, d_model, generator=torch.Generator().manual_seed(2))
    out, weights = mha(x, x, x, average_attn_weights=False)
    trace = attn.trace(x)
    torch.testing.assert_close(trace.output, out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(trace.weights, weights, atol=1e-6, rtol=1e-5)


def test_seeded_weights_are_deterministic_and_bias_independent() -> None:
    a = AttentionWeights.seeded(6, 11, bias=True)
    b = AttentionWeights.seeded(6, 11, bias=False)
    c = AttentionWeights.seeded(6, 12, bias=True)
    assert torch.equal(a.w_o, b.w_o) and b.b_o is None
    assert not torch.equal(a.w_q, c.w_q)


def test_attention_mixes_every_position() -> None:
    attn = SelfAttention(8, 2, seed=0)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(0))
    xp = x.clone()
    xp[2] += 1.0
    moved = (attn(xp) != attn(x)).any(dim=1)
    assert bool(moved.all())


@pytest.mark.parametrize(("d_model", "heads"), [(6, 4), (0, 1), (4, 0)])
def test_bad_shapes_raise(d_model: int, heads: int) -> None:
    with pytest.raises(ValueError, match="d_model"):
        SelfAttention(d_model, heads)


def test_wrong_input_width_raises() -> None:
    with pytest.raises(ValueError, match=r"x must be \[T, 4\]"):
        SelfAttention(4).trace(torch.zeros(3, 5))
