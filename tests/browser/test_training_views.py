"""The training panel's other views in a real browser, reading the drawn
data and checking it against the same request replayed over HTTP (training is
deterministic for a seed): the key-value reading of one unit, the dead zone over learning
rates and activations, and the capacity sweep."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.browser.conftest import show, wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 90_000


def ndjson(server_url: str, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST `body` and return the NDJSON answer's lines."""
    r = httpx.post(f"{server_url}{path}", json=body, timeout=120)
    r.raise_for_status()
    return [orjson.loads(line) for line in r.content.splitlines() if line.strip()]


def train(page, bodies: list[dict[str, Any]]) -> None:  # type: ignore[no-untyped-def]
    """Click Train, wait until done, and keep the /api/train bodies the page sent."""
    seen: list[dict[str, Any]] = []

    def keep(request) -> None:  # type: ignore[no-untyped-def]
        if request.url.endswith("/api/train") and request.method == "POST":
            seen.append(request.post_data_json)

    page.on("request", keep)
    page.locator("#train-start").click()
    page.locator('#train[data-train-state="done"]').wait_for(state="attached", timeout=TIMEOUT)
    page.remove_listener("request", keep)
    bodies.extend(seen)


def drawn(page, plot: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return page.evaluate(  # type: ignore[no-any-return]
        """(id) => document.getElementById(id).data.map((t) => ({
          name: t.name ?? null, x: Array.from(t.x ?? []), y: Array.from(t.y ?? []) }))""",
        plot,
    )


def test_key_value_reading_draws_the_trained_unit(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=train&train_steps=100&train_compare=0")
    wait_rendered(page)
    bodies: list[dict[str, Any]] = []
    train(page, bodies)
    assert len(bodies) == 1 and bodies[0]["ffn"] is True
    final = ndjson(server_url, "/api/train", bodies[0])[-1]["final"]
    reading = final["reading"]
    page.locator(f'#train-reading[data-unit="{reading["unit"]}"]').wait_for(state="attached")
    # W1 row against the keys: the keys it fires on in one trace, the others in the second
    key = drawn(page, "plot-train-key")
    fires = set(reading["fires_on"])
    want_fire = [reading["key_cosine"][i] for i in range(len(reading["key_cosine"])) if i in fires]
    assert key[0]["x"] == pytest.approx(want_fire, rel=1e-6, abs=1e-9)
    assert len(key[0]["x"]) + len(key[1]["x"]) == final["num_pairs"]
    assert all(y > 0 for y in key[0]["y"])  # "fires" means a positive activation
    # W2 row against the targets: one bar per class, the unit's output logits
    value = drawn(page, "plot-train-value")
    assert value[0]["y"] == pytest.approx(reading["value_logits"], rel=1e-6, abs=1e-9)
    assert [str(c) for c in range(len(reading["value_logits"]))] == value[0]["x"]
    # the share of the keys with the class it writes, beside what chance would give
    classes = len(reading["value_logits"])
    text = page.locator("#train-reading").inner_text()
    assert f"1 of {classes} classes" in text, text
    assert not page.recorder.errors


def test_dead_zone_grows_with_the_learning_rate_and_gelu_beside_it(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=train&train_steps=300&train_compare=0")
    wait_rendered(page)
    bodies: list[dict[str, Any]] = []
    for activation, lr in [("relu", "0.03"), ("relu", "1"), ("gelu", "1")]:
        page.select_option("#train-activation", activation)
        page.select_option("#train-lr", lr)
        train(page, bodies)
    assert [(b["activation"], b["lr"]) for b in bodies] == [
        ("relu", 0.03),
        ("relu", 1),
        ("gelu", 1),
    ]
    dead = drawn(page, "plot-train-dead")
    assert len(dead) == 3  # one dotted line per finished run, earlier runs kept
    names = [d["name"] for d in dead]
    assert "ReLU" in names[0] and "0.03" in names[0] and "GELU" in names[2]
    # every drawn count is the server's, recomputed by replaying the same body
    for line, body in zip(dead, bodies, strict=True):
        records = [r for r in ndjson(server_url, "/api/train", body) if "step" in r]
        assert line["x"] == [r["step"] for r in records]
        assert line["y"] == [r["dead_units"] for r in records]
    # a larger learning rate kills ReLU units that never come back
    assert dead[0]["y"][-1] < dead[1]["y"][-1]
    assert not page.recorder.errors


def test_capacity_sweep_runs_on_request(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=train")
    wait_rendered(page)
    assert page.locator("#train").get_attribute("data-capacity-state") is None  # not on load
    seen: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: seen.append(r.post_data_json) if r.url.endswith("/api/train/capacity") else None,
    )
    page.locator("#train-capacity-start").click()
    page.locator('#train[data-capacity-state="done"]').wait_for(state="attached", timeout=TIMEOUT)
    assert len(seen) == 1
    lines = ndjson(server_url, "/api/train/capacity", seen[0])
    models = [line["point"] for line in lines if "point" in line]
    bars = drawn(page, "plot-train-capacity")[0]
    # horizontal bars: a model per row (its d_ff, or "no FFN"), the memorised fraction on x
    labels, values = bars["y"], bars["x"]
    assert values == pytest.approx([m["memorised_fraction"] for m in models])
    assert labels[1:] == [str(d) for d in seen[0]["d_ff_values"]]
    assert len(models) == len(seen[0]["d_ff_values"]) + 1
    # the no-FFN model (first) memorises less than the widest FFN
    assert models[0]["d_ff"] is None and values[0] < values[-1]
    assert not page.recorder.errors


def test_the_empty_curves_say_the_run_has_started(page, server_url):  # type: ignore[no-untyped-def]
    # a trial at lesson step 17: "Press Train: the loss is drawn here..." while it trained
    page.goto(f"{server_url}/?lang=en&panel=train&train_steps=1000&train_compare=0")
    wait_rendered(page)
    show(page, "#train")
    loss = page.locator("#plot-train-loss")
    assert (loss.get_attribute("data-hint") or "").startswith("Press Train")
    page.locator("#train-start").click()
    running = '#train[data-train-state="running"] #plot-train-loss[data-hint^="Training"]'
    page.locator(running).wait_for(state="attached", timeout=TIMEOUT)
    page.locator('#train[data-train-state="done"]').wait_for(state="attached", timeout=TIMEOUT)
    assert (loss.get_attribute("data-hint") or "").startswith("Press Train")


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_each_model_shows_its_parameter_count_and_the_same_budget_control(  # type: ignore[no-untyped-def]
    page, server_url, lang
):
    """The FFN, the linear map and the same-budget linear control side by side: each row
    shows the server's parameter count, the control has the FFN's count and memorises fewer
    pairs, and the sentence above the table says so in the page's language."""
    page.goto(f"{server_url}/?lang={lang}&panel=train&train_steps=300")
    wait_rendered(page)
    bodies: list[dict[str, Any]] = []
    train(page, bodies)
    assert sorted((b["ffn"], b.get("same_budget", False)) for b in bodies) == [
        (False, False),
        (False, True),
        (True, False),
    ]
    finals = {}
    for body in bodies:
        final = ndjson(server_url, "/api/train", body)[-1]["final"]
        kind = "ffn" if body["ffn"] else "same_budget" if body.get("same_budget") else "linear"
        finals[kind] = final
    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll('#train-models tbody tr')).map((r) => ({
          model: r.dataset.model, params: Number(r.dataset.params),
          memorised: Number(r.dataset.memorised),
          cells: Array.from(r.cells).map((c) => c.textContent) }))"""
    )
    assert [r["model"] for r in rows] == ["ffn", "linear", "same_budget"]
    for row in rows:
        final = finals[row["model"]]
        assert row["params"] == final["params"]["total"]
        assert row["memorised"] == final["memorised"]
        assert f"{final['params']['total']:,}" == row["cells"][1]  # drawn as the page shows it
    counts = {r["model"]: r["params"] for r in rows}
    assert counts == {"ffn": 2196, "linear": 340, "same_budget": 2196}
    memorised = {r["model"]: r["memorised"] for r in rows}
    assert memorised["same_budget"] < memorised["ffn"] and memorised["linear"] < memorised["ffn"]
    assert page.locator("#train-models").is_visible()
    assert page.locator("#plot-train-accuracy").get_attribute("data-traces") == "3"
    sentence = page.locator("#train-result").inner_text()
    assert "2,196" in sentence and str(memorised["same_budget"]) in sentence
    assert ("activation" in sentence) if lang == "en" else ("激活函数" in sentence)
    assert not page.recorder.errors
