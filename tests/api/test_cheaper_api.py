"""POST /api/cheaper against NumPy: the low-rank FFN from the SVD of W1, MobileBERT's
stacked FFNs from their seeded streams, and every count from its formula."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.model.ffn import FFNWeights
from app.model.ffn_weights import _linear_init
from app.model.seeding import stream_seed
from tests.reference import ffn as ref_ffn

BASE = {"d_model": 16, "d_ff": 64, "num_tokens": 5, "seed": 2, "input_seed": 3}


def post(client: TestClient, **body: object) -> dict:
    r = client.post("/api/cheaper", json={**BASE, **body})
    assert r.status_code == 200, r.text
    return r.json()


def forward(client: TestClient) -> dict:
    r = client.post("/api/forward", json={**BASE, "include_weights": True})
    assert r.status_code == 200, r.text
    return r.json()


def test_low_rank_is_the_truncated_svd_of_w1(client: TestClient) -> None:
    d = post(client, rank=3)
    f = forward(client)
    x = np.array(f["input"], dtype=np.float64)
    w = {k: np.array(v, dtype=np.float64) for k, v in f["weights"].items()}
    u, s, vt = np.linalg.svd(w["w1"], full_matrices=False)
    w1_r = (u[:, :3] * s[:3]) @ vt[:3]
    ref = ref_ffn(x, w1_r, w["b1"], w["w2"], w["b2"], "relu")["output"]
    plain, low, stacked = d["variants"]
    assert [v["name"] for v in d["variants"]] == ["plain", "low_rank", "stacked"]
    np.testing.assert_allclose(plain["output"], f["output"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(low["output"], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d["singular_values"], s, rtol=1e-5)
    assert d["energy_kept"] == pytest.approx((s[:3] ** 2).sum() / (s**2).sum(), rel=1e-5)
    assert low["approximates_plain"] and not stacked["approximates_plain"]
    err = np.linalg.norm(np.array(low["output"]) - np.array(plain["output"]))
    assert low["relative_error"] == pytest.approx(err / np.linalg.norm(plain["output"]), rel=1e-4)


def test_full_rank_reproduces_the_plain_output(client: TestClient) -> None:
    low = post(client, rank=16)["variants"][1]
    assert low["relative_error"] < 1e-5


def test_counts_follow_the_formulas(client: TestClient) -> None:
    d = post(client, rank=4, d_inner=8, num_ffns=3)
    plain, low, stacked = d["variants"]
    t, dm, dff, r, di, f = 5, 16, 64, 4, 8, 3
    assert plain["params"]["total"] == 2 * dm * dff + dff + dm
    assert low["params"]["total"] == r * (dm + dff) + dff + dff * dm + dm
    small = 2 * di * 4 * di + 4 * di + di
    assert stacked["params"]["total"] == (dm * di + di) + f * small + (di * dm + dm)
    assert plain["flops"] == 2 * t * dm * dff * 2 + t * dff + t * dff + t * dm
    assert low["flops"] == plain["flops"] - 2 * t * dm * dff + 2 * t * (dm * r + r * dff)
    small_flops = 2 * t * di * 4 * di * 2 + t * 4 * di + t * 4 * di + t * di
    assert stacked["flops"] == 2 * 2 * t * dm * di + t * (di + dm) + f * (small_flops + t * di)
    assert low["params_ratio"] == pytest.approx(low["params"]["total"] / plain["params"]["total"])


def _linear(fan_in: int, fan_out: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    w, b = _linear_init(fan_in, fan_out, torch.Generator().manual_seed(seed))
    return w.double().numpy(), b.double().numpy()


def test_stacked_ffns_from_their_streams(client: TestClient) -> None:
    d = post(client, d_inner=4, num_ffns=4)
    x = np.array(forward(client)["input"], dtype=np.float64)
    w_in, b_in = _linear(16, 4, stream_seed(2, "stacked.in"))
    h = x @ w_in + b_in
    for k in range(4):
        fw = FFNWeights.seeded(4, 16, 2, gated=False, bias=True, stream=f"stacked.ffn{k}")
        w = {n: v.double().numpy() for n, v in fw.named().items()}
        h = h + ref_ffn(h, w["w1"], w["b1"], w["w2"], w["b2"], "relu")["output"]
    w_out, b_out = _linear(4, 16, stream_seed(2, "stacked.out"))
    np.testing.assert_allclose(d["variants"][2]["output"], h @ w_out + b_out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"rank": 17}, "rank = 17 is too large"),
        ({"rank": 0}, "rank"),
        ({"d_inner": 17}, "d_inner = 17 is too large"),
        ({"num_ffns": 13}, "num_ffns"),
        ({"d_model": 2048, "d_ff": 4096}, "at most 4,194,304"),
    ],
)
def test_refusals(client: TestClient, body: dict, words: str) -> None:
    r = client.post("/api/cheaper", json={**BASE, **body})
    assert r.status_code == 422, r.text
    assert words in r.text
