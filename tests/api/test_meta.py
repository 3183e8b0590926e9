"""GET /api/health, /api/activations, /api/presets."""

from __future__ import annotations

import torch

from app.model import ACTIVATIONS


def test_health_reports_versions(client):
    data = client.get("/api/health").json()
    assert data["status"] == "ok"
    assert data["torch"] == torch.__version__
    assert data["torch"].startswith("2.13.0")


def test_activations_have_formulas_and_gating(client):
    data = client.get("/api/activations").json()
    assert [a["name"] for a in data] == list(ACTIVATIONS)
    by_name = {a["name"]: a for a in data}
    assert by_name["swiglu"]["gated"] and by_name["geglu"]["gated"]
    assert not by_name["relu"]["gated"] and by_name["relu"]["exact_zeros"]
    assert all(a["formula"] for a in data)


def test_presets_from_the_literature(client):
    presets = {p["id"]: p for p in client.get("/api/presets").json()}
    assert (presets["transformer-base"]["d_model"], presets["transformer-base"]["d_ff"]) == (
        512,
        2048,
    )
    assert presets["transformer-base"]["params"] == 2_099_712
    assert presets["bert-base"]["activation"] == "gelu"
    assert presets["gpt2-small"]["activation"] == "gelu_tanh"
    llama = presets["llama-7b"]
    assert (llama["d_model"], llama["d_ff"], llama["activation"], llama["bias"]) == (
        4096,
        11008,
        "swiglu",
        False,
    )
    tiny = presets["tiny"]
    assert (tiny["d_model"], tiny["d_ff"]) == (2, 4) and tiny["weights"] and tiny["tokens"]
    assert all(p["source"] for p in presets.values())


def test_every_preset_runs(client):
    for p in client.get("/api/presets").json():
        body = {
            "d_model": p["d_model"],
            "d_ff": p["d_ff"],
            "activation": p["activation"],
            "bias": p["bias"],
            "num_tokens": 2,
        }
        if p["tokens"]:
            body = {**body, "tokens": p["tokens"], "weights": p["weights"]}
            del body["num_tokens"]
        r = client.post("/api/forward", json=body)
        assert r.status_code == 200, (p["id"], r.text[:300])
        assert r.json()["params"]["total"] == p["params"]
