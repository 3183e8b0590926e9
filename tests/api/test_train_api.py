"""POST /api/train and /api/train/capacity over HTTP: the NDJSON stream, NumPy checks of the
final weights, determinism, the no-FFN contrast, and refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.routes import train as train_routes
from app.config import Settings
from app.main import create_app

S = {"d_model": 16, "d_ff": 64, "num_pairs": 64, "num_classes": 4, "steps": 120, "lr": 0.03}


def stream(client: TestClient, path: str = "/api/train", **body: object) -> list[dict]:
    with client.stream("POST", path, json=body) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"] == "application/x-ndjson"
        return [json.loads(line) for line in r.iter_lines() if line]


def test_progress_lines_then_final(client: TestClient) -> None:
    lines = stream(client, **S, log_every=20)
    progress, last = lines[:-1], lines[-1]
    assert [p["step"] for p in progress] == [0, 20, 40, 60, 80, 100, 120]
    assert all(set(p) == {"step", "loss", "accuracy", "dead_units"} for p in progress)
    assert progress[-1]["loss"] < progress[0]["loss"] / 10
    assert last["done"] is True
    final = last["final"]
    assert final["step"] == 120 and final["stopped"] == "completed"
    assert final["accuracy"] == 1.0 and final["memorised"] == 64
    assert final["params"]["total"] == (16 * 64 + 64 + 64 * 16 + 16) + (16 * 4 + 4)
    assert final["config"]["d_ff"] == 64 and final["reading"]["unit"] in range(64)


def test_no_ffn_memorises_less_on_the_same_seed(client: TestClient) -> None:
    with_ffn = stream(client, **S)[-1]["final"]
    without = stream(client, **S, ffn=False)[-1]["final"]
    assert without["config"]["ffn"] is False and without["reading"] is None
    assert without["dead_units"] is None
    assert without["memorised"] < with_ffn["memorised"]
    assert without["params"]["sublayer"] == 16 * 16 + 16


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_budget_linear_control_has_the_ffn_count_and_memorises_less(
    client: TestClient, seed: int
) -> None:
    """The linear control with the FFN's own two maps: the FFN model's parameter count, and
    still fewer pairs memorised than the FFN, so the budget is not what memorises."""
    body = {**S, "steps": 300, "seed": seed, "include_weights": True}
    with_ffn = stream(client, **body)[-1]["final"]
    control = stream(client, **body, ffn=False, same_budget=True)[-1]["final"]
    assert control["params"] == with_ffn["params"]
    assert control["params"]["total"] == (16 * 64 + 64 + 64 * 16 + 16) + (16 * 4 + 4)
    assert control["config"]["same_budget"] is True and control["config"]["d_ff"] == 64
    assert control["reading"] is None and control["dead_units"] is None
    assert control["memorised"] < with_ffn["memorised"]
    # the control is a linear map of x: recompute its logits from its final weights
    w = {k: np.asarray(v, dtype=np.float64) for k, v in control["weights"].items()}
    assert set(w) == {"w1", "b1", "w2", "b2", "w_u", "b_u"}
    keys = np.asarray(control["keys"], dtype=np.float64)
    logits = (keys + (keys @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]) @ w["w_u"] + w["b_u"]
    assert (logits.argmax(1) == np.array(control["targets"])).sum() == control["memorised"]


def test_dead_units_and_accuracy_recomputed_from_the_final_weights(client: TestClient) -> None:
    final = stream(client, **{**S, "lr": 1.0, "steps": 200}, include_weights=True)[-1]["final"]
    w = {k: np.array(v, dtype=np.float64) for k, v in final["weights"].items()}
    keys = np.array(final["keys"], dtype=np.float64)
    hidden = np.maximum(keys @ w["w1"] + w["b1"], 0.0)
    dead = np.flatnonzero((hidden == 0).all(axis=0)).tolist()
    assert dead and final["dead_unit_indices"] == dead and final["dead_units"] == len(dead)
    logits = (keys + hidden @ w["w2"] + w["b2"]) @ w["w_u"] + w["b_u"]
    accuracy = float((logits.argmax(1) == np.array(final["targets"])).mean())
    assert accuracy == final["accuracy"]
    unit = final["reading"]["unit"]
    np.testing.assert_allclose(final["reading"]["w2_value"], w["w2"][unit], rtol=0, atol=0)
    assert final["reading"]["fires_on"] == np.flatnonzero(hidden[:, unit] > 0).tolist()


def test_gelu_beside_relu(client: TestClient) -> None:
    final = stream(client, **S, activation="gelu")[-1]["final"]
    assert final["rule"] == "abs_below_threshold" and final["threshold"] == 0.01


def test_deterministic_for_a_seed(client: TestClient) -> None:
    def run(**extra: object) -> list[dict]:
        lines = stream(client, **S, **extra)
        lines[-1]["final"].pop("seconds")
        return lines

    assert run() == run()
    assert run() != run(seed=1)


def test_capacity_sweep(client: TestClient) -> None:
    body = {"d_model": 8, "num_pairs": 128, "num_classes": 8, "steps": 150, "d_ff_values": [2, 64]}
    lines = stream(client, "/api/train/capacity", **body)
    points = [line["point"] for line in lines[:-1]]
    assert [p["d_ff"] for p in points] == [None, 2, 64]
    assert lines[-1]["final"]["points"] == points
    assert points[2]["memorised_fraction"] > max(p["memorised_fraction"] for p in points[:2])
    assert points[0]["params"] == 8 * 8 + 8 + 8 * 8 + 8


def test_status_counts_the_steps(client: TestClient) -> None:
    before = client.get("/api/train/status").json()
    stream(client, **S)
    after = client.get("/api/train/status").json()
    assert after["steps_run"] - before["steps_run"] == 120
    assert after["completed"] == before["completed"] + 1 and after["running"] == 0


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"steps": 5001}, "steps = 5001 is too large: at most 5,000"),
        ({"steps": 0}, "steps"),
        ({"num_pairs": 5000}, "num_pairs = 5000 is too large"),
        ({"num_classes": 1}, "num_classes"),
        ({"d_model": 64, "d_ff": 16384}, "training runs at most 500,000"),
        ({"lr": 0}, "lr"),
        ({"task": "copy"}, "memory"),
        ({"activation": "tanh"}, "unknown activation"),
        ({"unit": 64}, "unit = 64 is out of range"),
        ({"same_budget": True}, "it needs ffn = false"),
        ({"steps": "10"}, "integer"),
    ],
)
def test_bad_bodies_are_422(client: TestClient, body: dict, words: str) -> None:
    r = client.post("/api/train", json={**S, **body})
    assert r.status_code == 422, r.text
    assert words in str(r.json()["detail"])
    assert "max_" not in r.text


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"d_ff_values": []}, "d_ff_values is empty"),
        ({"d_ff_values": list(range(1, 10))}, "at most 8"),
        ({"d_ff_values": [0, 4]}, "at least 1"),
    ],
)
def test_bad_sweeps_are_422(client: TestClient, body: dict, words: str) -> None:
    r = client.post("/api/train/capacity", json=body)
    assert r.status_code == 422, r.text
    assert words in str(r.json()["detail"])


def test_work_and_time_bounds(settings_env: pytest.MonkeyPatch) -> None:
    settings_env.setenv("FFN_LAB_MAX_TRAIN_WORK", "5000000")
    settings_env.setenv("FFN_LAB_MAX_TRAIN_SECONDS", "0.000001")
    with TestClient(create_app()) as c:
        r = c.post("/api/train", json={**S, "steps": 2000})
        assert r.status_code == 422 and "floating-point operations" in r.text
        final = stream(c, **{**S, "steps": 3})[-1]["final"]
        assert final["stopped"] == "time_limit" and final["step"] < 3


def test_busy_beyond_concurrent_trainings(monkeypatch: pytest.MonkeyPatch) -> None:
    # The route reads the limit from get_settings() per request: pin it there, so that no
    # other thread re-filling the settings cache (a worker of an earlier test) can change it.
    one_at_a_time = Settings(max_concurrent_trainings=1)
    monkeypatch.setattr(train_routes, "get_settings", lambda: one_at_a_time)
    # No wait for a slot: this checks the limit itself. With the route's 2 s wait, a first
    # stream that ended inside it (fresh-clone CI runs saw it counted as cancelled) gave
    # its slot to the second request, a 200 where this test wants the 503.
    monkeypatch.setattr(train_routes, "SLOT_WAIT_SECONDS", 0.0)
    body = {**S, "steps": 2000, "log_every": 10}
    with TestClient(create_app()) as c, c.stream("POST", "/api/train", json=body) as r:
        first = next(r.iter_lines())
        assert json.loads(first)["step"] == 0
        busy = c.post("/api/train", json=S)
        # on a failure, say what the server was doing (the first stream must still hold its slot)
        status = c.get("/api/train/status").json()
        assert busy.status_code == 503, (busy.status_code, busy.text[:300], status)
        assert "at once" in busy.json()["detail"]
