"""/api/forward and /api/perturb: big tensors are summarised for display, statistics are not.

Limits are lowered through the environment (FFN_LAB_DISPLAY_*) so that small, fast
configurations cross them; the defaults are checked on their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app


@pytest.fixture
def small_limits(settings_env: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client whose server summarises answers above 100 numbers, to 40 numbers a tensor."""
    settings_env.setenv("FFN_LAB_DISPLAY_MAX_VALUES", "100")
    settings_env.setenv("FFN_LAB_DISPLAY_KEEP_VALUES", "40")
    with TestClient(create_app()) as c:
        yield c


def reference(body: dict[str, object], client: TestClient) -> dict[str, np.ndarray]:
    """The full tensors (display='full') of the same request."""
    full = client.post("/api/forward", json={**body, "display": "full"}).json()
    assert full["reduction"] is None
    return {k: np.array(full[k]) for k in ("input", "pre_activation", "hidden", "output")} | {
        "sparsity": full["sparsity"],
        "histogram": full["pre_activation_histogram"],
    }


def test_defaults_keep_small_configs_whole_and_exact(client: TestClient) -> None:
    body = {"d_model": 64, "d_ff": 256, "num_tokens": 8, "seed": 1}
    data = client.post("/api/forward", json=body).json()
    assert data["reduction"] is None
    hidden = np.array(data["hidden"])
    assert hidden.shape == (8, 256)
    # an independent NumPy reference of the same (seeded) weights
    weights = client.post("/api/forward", json={**body, "include_weights": True}).json()["weights"]
    x = np.array(data["input"], dtype=np.float64)
    pre = x @ np.array(weights["w1"]) + np.array(weights["b1"])
    np.testing.assert_allclose(hidden, np.maximum(pre, 0), atol=1e-5)
    counts = data["pre_activation_histogram"]["counts"]
    assert sum(counts) == 8 * 256
    assert len(data["pre_activation_histogram"]["edges"]) == Settings().histogram_bins + 1


def test_paper_base_model_at_16_tokens_is_sent_whole(client: TestClient) -> None:
    body = {"d_model": 512, "d_ff": 2048, "num_tokens": 16}
    data = client.post("/api/forward", json=body).json()
    assert data["reduction"] is None
    assert np.array(data["hidden"]).shape == (16, 2048)
    bigger = client.post("/api/forward", json={**body, "num_tokens": 17}).json()
    (group,) = bigger["reduction"]["groups"]
    assert group["tensors"] == ["pre_activation", "hidden"]
    assert len(group["kept"]) == Settings().display_keep_values // 17


def test_big_hidden_is_a_window_of_real_units_with_full_statistics(
    small_limits: TestClient,
) -> None:
    body = {"d_model": 6, "d_ff": 50, "num_tokens": 4, "activation": "relu", "seed": 2}
    data = small_limits.post("/api/forward", json=body).json()
    full = reference(body, small_limits)
    reduction = data["reduction"]
    assert reduction["method"] == "window"
    assert (reduction["max_values"], reduction["keep_values"]) == (100, 40)
    (group,) = reduction["groups"]  # input/output are 4 x 6 = 24 numbers: whole
    assert group["tensors"] == ["pre_activation", "hidden"]
    assert group["full_shape"] == [4, 50]
    assert group["ranked_by"] == "hidden"
    assert (group["start"], group["stop"]) == (0, 10)
    assert group["kept"] == list(range(10))
    # the window's columns are the model's numbers, unchanged
    np.testing.assert_array_equal(np.array(data["hidden"]), full["hidden"][:, :10])
    np.testing.assert_array_equal(np.array(data["pre_activation"]), full["pre_activation"][:, :10])
    np.testing.assert_array_equal(np.array(data["input"]), full["input"])
    # every statistic is the full tensor's
    assert data["sparsity"] == full["sparsity"]
    assert len(data["sparsity"]["per_neuron"]) == 50
    assert data["pre_activation_histogram"] == full["histogram"]
    assert data["shapes"]["hidden"] == [4, 50]


def test_window_moves_with_unit_start_and_stays_inside(small_limits: TestClient) -> None:
    body = {"d_model": 6, "d_ff": 50, "num_tokens": 4, "seed": 2}
    full = reference(body, small_limits)
    moved = small_limits.post("/api/forward", json={**body, "unit_start": 17}).json()
    (group,) = moved["reduction"]["groups"]
    assert (group["start"], group["stop"]) == (17, 27)
    np.testing.assert_array_equal(np.array(moved["hidden"]), full["hidden"][:, 17:27])
    past = small_limits.post("/api/forward", json={**body, "unit_start": 45}).json()
    (group,) = past["reduction"]["groups"]
    assert (group["start"], group["stop"]) == (40, 50)  # moved left so it fits
    np.testing.assert_array_equal(np.array(past["hidden"]), full["hidden"][:, 40:])


def test_window_keeps_the_zero_fraction_where_top_rms_did_not(client: TestClient) -> None:
    """Transformer-base at 32 tokens (summarised by default): ReLU's zeros stay on screen."""
    body = {"d_model": 512, "d_ff": 2048, "num_tokens": 32, "activation": "relu"}
    data = client.post("/api/forward", json=body).json()
    assert data["reduction"]["method"] == "window"
    real = data["sparsity"]["overall"]
    drawn = float((np.array(data["hidden"]) == 0).mean())
    assert abs(drawn - real) < 0.03, (drawn, real)
    top = client.post("/api/forward", json={**body, "display": "top_rms"}).json()
    assert top["reduction"]["method"] == "top_rms_columns"
    assert top["reduction"]["groups"][0]["start"] is None
    top_drawn = float((np.array(top["hidden"]) == 0).mean())
    assert top_drawn < real  # the most active units hold fewer zeros: why it is not the default


def test_top_rms_on_request_keeps_the_most_active_units(small_limits: TestClient) -> None:
    body = {"d_model": 6, "d_ff": 50, "num_tokens": 4, "activation": "relu", "seed": 2}
    data = small_limits.post("/api/forward", json={**body, "display": "top_rms"}).json()
    full = reference(body, small_limits)
    (group,) = data["reduction"]["groups"]
    kept = group["kept"]
    assert len(kept) == 40 // 4 and kept == sorted(kept)
    rms = np.sqrt((full["hidden"].astype(np.float64) ** 2).mean(axis=0))
    assert set(kept) == set(np.argsort(-rms, kind="stable")[:10].tolist())
    np.testing.assert_array_equal(np.array(data["hidden"]), full["hidden"][:, kept])


def test_gated_and_train_tensors_share_the_kept_columns(small_limits: TestClient) -> None:
    body = {
        "d_model": 4,
        "d_ff": 40,
        "num_tokens": 5,
        "activation": "swiglu",
        "bias": False,
        "mode": "train",
        "dropout": 0.3,
    }
    data = small_limits.post("/api/forward", json=body).json()
    full = small_limits.post("/api/forward", json={**body, "display": "full"}).json()
    (group,) = data["reduction"]["groups"]
    assert group["tensors"] == ["pre_activation", "up", "hidden", "dropped"]
    kept = group["kept"]
    assert len(kept) == 8
    for name in ("up", "dropped"):
        np.testing.assert_array_equal(np.array(data[name]), np.array(full[name])[:, kept])


def test_d_model_tensors_are_summarised_too(small_limits: TestClient) -> None:
    body = {"d_model": 30, "d_ff": 8, "num_tokens": 4}
    data = small_limits.post("/api/forward", json=body).json()
    (group,) = data["reduction"]["groups"]
    assert group["tensors"] == ["input", "output"]
    assert group["ranked_by"] == "output"
    assert np.array(data["input"]).shape == (4, 10)
    assert np.array(data["hidden"]).shape == (4, 8)


def test_perturb_sends_a_window_of_features(small_limits: TestClient) -> None:
    body = {"d_model": 40, "d_ff": 8, "num_tokens": 4, "position": 1, "scale": 2.0}
    data = small_limits.post("/api/perturb", json={**body, "feature_start": 5}).json()
    full = small_limits.post("/api/perturb", json={**body, "display": "full"}).json()
    assert full["reduction"] is None
    (group,) = data["reduction"]["groups"]
    assert group["ranked_by"] == "output_delta"
    assert group["tensors"] == [
        "input",
        "input_perturbed",
        "output",
        "output_perturbed",
        "output_delta",
    ]
    assert group["kept"] == list(range(5, 15))
    delta = np.array(full["output_delta"])
    np.testing.assert_array_equal(np.array(data["output_delta"]), delta[:, 5:15])
    for key in ("delta_norm_per_position", "changed_positions", "max_abs_change_other_positions"):
        assert data[key] == full[key]
    assert data["changed_positions"] == [1]


def test_display_option_is_validated(client: TestClient) -> None:
    response = client.post("/api/forward", json={"display": "tiny"})
    assert response.status_code == 422
    assert "display" in str(response.json()["detail"][0]["loc"])


def test_server_timing_header(client: TestClient) -> None:
    response = client.post("/api/forward", json={"d_model": 8, "d_ff": 16})
    names = [part.split(";")[0] for part in response.headers["server-timing"].split(", ")]
    assert names == ["model", "forward", "analysis", "encode"]


@pytest.mark.slow
def test_llama_preset_answer_is_under_a_megabyte(client: TestClient) -> None:
    """LLaMA-7B's FFN (4096 -> 11008, SwiGLU) at the most tokens the server allows."""
    body = {
        "d_model": 4096,
        "d_ff": 11008,
        "activation": "swiglu",
        "bias": False,
        "num_tokens": Settings().max_tokens,
    }
    response = client.post("/api/forward", json=body)
    assert response.status_code == 200
    assert len(response.content) <= 1_000_000
    data = response.json()
    assert data["shapes"]["hidden"] == [Settings().max_tokens, 11008]
    assert len(data["sparsity"]["per_neuron"]) == 11008
    perturb = client.post("/api/perturb", json={**body, "position": 3})
    assert len(perturb.content) <= 1_000_000
