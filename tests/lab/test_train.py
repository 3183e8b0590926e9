"""app.lab.learning.train without HTTP: learning, the no-FFN contrast, dead units, stopping."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.lab.learning.capacity import capacity_sweep
from app.lab.learning.memory import TrainConfig, TrainError, memory_task, model_params
from app.lab.learning.train import Final, Progress, run_to_end, train
from app.model.memory import MemoryModel
from app.model.seeding import generator

S = TrainConfig(d_model=16, d_ff=64, num_pairs=64, num_classes=4, steps=150, lr=0.03, log_every=10)


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def test_loss_falls_and_the_pairs_are_memorised() -> None:
    records = list(train(S))
    progress = [r for r in records if isinstance(r, Progress)]
    assert [p.step for p in progress] == list(range(0, 151, 10))
    assert progress[-1].loss < progress[0].loss / 100
    assert progress[0].accuracy < 0.5 and progress[-1].accuracy == 1.0
    final = records[-1]
    assert isinstance(final, Final) and final.memorised == 64 and final.stopped == "completed"


def test_without_the_ffn_the_same_pairs_are_memorised_less() -> None:
    with_ffn = run_to_end(S)
    without = run_to_end(TrainConfig(**{**vars(S), "ffn": False}))
    assert without.progress.dead_units is None and without.reading is None
    assert without.memorised < with_ffn.memorised
    assert without.progress.accuracy <= 0.8


def test_same_budget_linear_control_starts_from_the_ffn_weights_and_stays_linear() -> None:
    """The control's two maps start as the FFN's w1, b1, w2, b2 (same seed), hold the same
    parameter count, and after training still memorise fewer pairs than the FFN."""
    config = TrainConfig(**{**vars(S), "ffn": False, "same_budget": True})
    assert model_params(config) == model_params(S)
    ffn = MemoryModel(16, 64, "relu", 4, 0, True)
    control = MemoryModel(16, 64, "relu", 4, 0, False, same_budget=True)
    start_ffn, start_control = ffn.final_weights(), control.final_weights()
    assert set(start_control) == set(start_ffn)
    for name, value in start_ffn.items():
        np.testing.assert_array_equal(start_control[name], value)
    x = torch.randn(5, 16, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        # linear in x: f(2x) - 2 f(x) is the constant -b (the bias path), for any x
        f = lambda v: control(v)[0]  # noqa: E731
        np.testing.assert_allclose(f(2 * x) - 2 * f(x), f(0 * x) * -1, atol=1e-5)
    with_ffn, linear = run_to_end(S), run_to_end(config)
    assert linear.params == with_ffn.params
    assert linear.memorised < with_ffn.memorised and linear.reading is None
    with pytest.raises(TrainError, match="ffn to false"):
        TrainConfig(same_budget=True)


def test_keys_and_targets_come_from_their_own_streams() -> None:
    keys, targets = memory_task(S)
    assert torch.equal(keys, torch.randn(64, 16, generator=generator(0, "train.keys")))
    assert torch.equal(targets, torch.randint(0, 4, (64,), generator=generator(0, "train.targets")))


def test_dead_units_recomputed_from_the_final_weights() -> None:
    # A large learning rate kills ReLU units (the dead zone); the count must be real.
    final = run_to_end(TrainConfig(**{**vars(S), "lr": 1.0, "steps": 200}))
    w = {k: v.astype(np.float64) for k, v in final.weights.items()}
    keys = final.keys.astype(np.float64)
    hidden = np.maximum(keys @ w["w1"] + w["b1"], 0.0)
    dead = np.flatnonzero((hidden == 0).all(axis=0)).tolist()
    assert len(dead) > 0  # this configuration does produce dead units
    assert final.dead_unit_indices == dead and final.progress.dead_units == len(dead)
    logits = (keys + hidden @ w["w2"] + w["b2"]) @ w["w_u"] + w["b_u"]
    assert (logits.argmax(1) == np.array(final.targets)).sum() == final.memorised
    # the key-value reading from the same weights
    r = final.reading
    assert r is not None
    np.testing.assert_allclose(r.w1_key, w["w1"][:, r.unit], rtol=0, atol=0)
    np.testing.assert_allclose(r.value_logits, w["w2"][r.unit] @ w["w_u"], rtol=1e-5, atol=1e-5)
    fires = np.flatnonzero(hidden[:, r.unit] > 0).tolist()
    assert r.fires_on == fires
    assert sum(r.target_counts) == len(fires)


def test_same_seed_same_numbers_other_seed_other_numbers() -> None:
    def run(config: TrainConfig) -> list[Progress]:
        return [r for r in train(config) if isinstance(r, Progress)]

    assert run(S) == run(S)
    assert run(S) != run(TrainConfig(**{**vars(S), "seed": 1}))


def test_closing_the_generator_stops_the_steps() -> None:
    steps: list[int] = []
    records = train(TrainConfig(**{**vars(S), "steps": 1000}), on_step=lambda: steps.append(1))
    for record in records:
        if isinstance(record, Progress) and record.step == 20:
            break
    records.close()
    assert len(steps) == 20


def test_time_limit_stops_and_says_so() -> None:
    final = run_to_end(TrainConfig(**{**vars(S), "steps": 5000}), max_seconds=0.0)
    assert final.stopped == "time_limit" and final.progress.step < 5000


def test_capacity_grows_with_d_ff() -> None:
    config = TrainConfig(d_model=8, d_ff=4, num_pairs=128, num_classes=8, steps=200, lr=0.03)
    points = list(capacity_sweep(config, [2, 64]))
    assert [p.d_ff for p in points] == [None, 2, 64]
    assert points[2].memorised_fraction > points[1].memorised_fraction
    assert points[2].memorised_fraction > points[0].memorised_fraction


def test_bad_setups_are_train_errors() -> None:
    for changes, words in [
        ({"task": "copy"}, "unknown task"),
        ({"steps": 0}, "steps"),
        ({"num_classes": 1}, "num_classes"),
        ({"lr": 0.0}, "lr"),
        ({"activation": "tanh"}, "unknown activation"),
    ]:
        with pytest.raises(TrainError, match=words):
            TrainConfig(**{**vars(S), **changes})
    with pytest.raises(TrainError, match="unit"):
        next(train(S, unit=64))
    assert issubclass(TrainError, ValueError)


@pytest.mark.parametrize("seed", range(5))
def test_the_default_unit_reading_is_well_above_chance(seed: int) -> None:
    """The lesson's key-value reading shows a unit whose W2 row writes the class of the keys
    it fires on (the most active unit fires on most keys and read at chance or below)."""
    config = TrainConfig(**{**vars(S), "steps": 300, "seed": seed})
    final = run_to_end(config)
    r = final.reading
    assert r is not None and r.agreement is not None
    chance = 1 / config.num_classes
    assert r.agreement >= 1.5 * chance
    # the best such unit, recomputed in NumPy from the final weights
    w, keys = final.weights, final.keys.astype(np.float64)
    active = (keys @ w["w1"].astype(np.float64) + w["b1"]) > 0
    top = (w["w2"].astype(np.float64) @ w["w_u"].astype(np.float64)).argmax(1)
    targets = np.asarray(final.targets)
    fires = active.sum(0)
    share = (active & (targets[:, None] == top[None, :])).sum(0) / np.maximum(fires, 1)
    enough = fires >= max(4, config.num_pairs // 16)
    assert r.agreement == pytest.approx(share[enough].max())
