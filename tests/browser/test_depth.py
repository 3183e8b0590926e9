"""The stack and training panels in a real browser, reading the drawn data."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.browser.conftest import wait_rendered

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


def per_layer(page) -> list[list[int]]:  # type: ignore[no-untyped-def]
    return json.loads(page.locator("#stack-changed").get_attribute("data-per-layer") or "[]")


def test_stack_panel_traces_the_nudge_layer_by_layer(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=stack&tokens=6&position=2&scale=2&layers=5")
    wait_rendered(page)
    page.locator("#stack[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
    assert per_layer(page) == [[2]] * 5
    assert page.locator("#plot-stack-delta").get_attribute("data-rows") == "5"
    assert page.locator("#stack-params").get_attribute("data-value") == str(5 * 2128)
    # The drawn ‖Δ‖ map: zero everywhere but column 2, in every layer.
    z = page.evaluate("Array.from(document.getElementById('plot-stack-delta').data[0].z)")
    assert all(row[i] == 0 for row in z for i in range(6) if i != 2)
    assert all(row[2] > 0 for row in z)
    page.locator("#stack-attention").check()
    page.wait_for_function(
        "() => JSON.parse(document.getElementById('stack-changed').dataset.perLayer || '[]')"
        ".every((rows) => rows.length === 6)",
        timeout=TIMEOUT,
    )
    assert "stack_attention=1" in page.url
    page.locator("#stack-share").check()
    page.locator('#stack-params[data-value="2128"]').wait_for(state="attached", timeout=TIMEOUT)
    assert "stack_share=1" in page.url
    assert not page.recorder.errors


def test_training_panel_progress_curves_and_result(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=train&train_steps=300")
    wait_rendered(page)
    # every value the progress bar takes, recorded as it is set (a fast run may go from 0 to
    # the end between two frames, so polling for a value in between could miss it)
    page.evaluate(
        """() => {
          window.__progress = [];
          const bar = document.getElementById('train-progress');
          new MutationObserver((records) => {
            for (const r of records) window.__progress.push(Number(r.oldValue ?? 0));
            window.__progress.push(Number(bar.dataset.value));
          }).observe(bar, { attributes: true, attributeFilter: ['data-value'],
                            attributeOldValue: true });
        }"""
    )
    page.locator("#train-start").click()
    page.locator('#train[data-train-state="done"]').wait_for(state="attached", timeout=TIMEOUT)
    # The progress bar moved while lines arrived...
    seen = page.evaluate("window.__progress")
    assert any(0 < v < 900 for v in seen), seen
    progress = page.evaluate(
        "[document.getElementById('train-progress').value,"
        " document.getElementById('train-progress').max]"
    )
    assert progress == [900, 900]  # three runs of 300 steps
    result = page.locator("#train-result")
    assert int(result.get_attribute("data-with-ffn") or 0) == 64
    assert int(result.get_attribute("data-without-ffn") or 64) < 64
    # the drawn curves: three runs; accuracy of the FFN run ends at 1
    assert page.locator("#plot-train-accuracy").get_attribute("data-traces") == "3"
    accuracy = page.evaluate("Array.from(document.getElementById('plot-train-accuracy').data[0].y)")
    assert accuracy[-1] == 1.0 and accuracy[0] < 0.5
    # x axes span the run (0..steps); the dead-unit count starts at 0, never below
    ranges = page.evaluate(
        """() => ['plot-train-loss', 'plot-train-accuracy', 'plot-train-dead'].map((id) =>
          Array.from(document.getElementById(id).layout.xaxis.range))"""
    )
    assert ranges == [[0, 300]] * 3
    dead_y = page.evaluate(
        "Array.from(document.getElementById('plot-train-dead').layout.yaxis.range)"
    )
    assert dead_y[0] == 0 and dead_y[1] > 0
    # a count of units: whole-number ticks only (never 0.2 of a unit)
    dead_ticks = page.evaluate(
        "(() => { const a = document.getElementById('plot-train-dead').layout.yaxis;"
        " return [a.tickmode, a.dtick]; })()"
    )
    assert dead_ticks[0] == "linear" and dead_ticks[1] >= 1 and float(dead_ticks[1]).is_integer()
    page.locator("#train-reading[data-unit]").wait_for(state="attached")
    assert not page.recorder.errors


def test_cancel_stops_the_servers_work(page, server_url):  # type: ignore[no-untyped-def]
    before = httpx.get(f"{server_url}/api/train/status").json()
    page.goto(f"{server_url}/?panel=train&train_steps=1000&train_d_ff=256")
    wait_rendered(page)
    page.locator("#train-start").click()
    # cancel as soon as the server runs both streams (the page's drawing lags the stream)
    page.wait_for_function(
        """async (before) => { const s = await (await fetch('/api/train/status')).json();
          return s.running === 2 && s.steps_run > before; }""",
        arg=before["steps_run"],
        polling=10,
        timeout=60_000,
    )
    # the click event itself: a real click is dispatched at once, while Playwright's
    # click() first waits for the button to be stable over frames that the drawing
    # stretches to ~1 s under load (long enough for the server to finish both runs)
    page.locator("#train-cancel").dispatch_event("click")
    page.locator('#train[data-train-state="cancelled"]').wait_for(state="attached")
    page.wait_for_function(  # the server's state: both streams have ended
        """async (before) => { const s = await (await fetch('/api/train/status')).json();
          return s.running === 0 && s.cancelled + s.completed - before >= 2; }""",
        arg=before["cancelled"] + before["completed"],
        polling=100,
        timeout=60_000,
    )
    status = httpx.get(f"{server_url}/api/train/status").json()
    assert status["running"] == 0
    # both streams ended; the longer one (with the FFN) was cut short by the cancel (the
    # smaller linear models run one after the other: the first may already have finished
    # its steps on a fast machine, and the second then started and was cut short)
    ended = status["cancelled"] + status["completed"] - before["cancelled"] - before["completed"]
    assert ended in (2, 3)
    assert status["steps_run"] - before["steps_run"] < 3 * 1000


def test_stack_panel_on_the_real_model(page, server_url):  # type: ignore[no-untyped-def]
    from app.model.pretrained import is_available

    if not is_available():
        pytest.skip("the pretrained weights package is not installed")
    page.goto(f"{server_url}/?panel=stack&source=text&position=2&scale=1&layers=6")
    page.locator("#stack[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)
    assert per_layer(page) == [[2]] * 6  # six real FFN sub-layers: row 2 only
    z = page.evaluate("Array.from(document.getElementById('plot-stack-delta').data[0].z)")
    assert len(z) == 6 and all(len(row) == 9 for row in z)  # 6 layers x 9 positions
    page.locator("#stack-attention").check()
    page.wait_for_function(
        "() => JSON.parse(document.getElementById('stack-changed').dataset.perLayer || '[]')"
        ".every((rows) => rows.length === 9)",
        timeout=TIMEOUT,
    )
    assert page.locator("#stack-share").is_disabled()


def test_cheaper_panel_counts(page, server_url):  # type: ignore[no-untyped-def]
    page.goto(f"{server_url}/?panel=cheaper&d_model=16&d_ff=64&cheap_rank=4")
    wait_rendered(page)
    page.locator("#cheaper[data-rendered]").wait_for(state="attached", timeout=TIMEOUT)

    def params(name: str) -> int:
        cell = page.locator(f'#cheaper-rows tr[data-name="{name}"] td').first
        return int(cell.get_attribute("data-value") or 0)

    assert params("plain") == 2128
    assert params("low_rank") == 4 * (16 + 64) + 64 + 64 * 16 + 16
    assert params("stacked") == (16 * 4 + 4) + 4 * (2 * 4 * 16 + 16 + 4) + (4 * 16 + 16)
    ratios = page.evaluate("Array.from(document.getElementById('plot-cheaper-ratios').data[0].y)")
    assert ratios[0] == 1 and ratios[1] == params("low_rank") / 2128
    page.locator("#cheaper-rank").fill("16")
    page.locator("#cheaper-rank").dispatch_event("change")
    page.wait_for_function(
        "() => document.querySelector('#cheaper-rows tr[data-name=\"low_rank\"] td')"
        ".dataset.value === String(16 * 80 + 64 + 1024 + 16)",
        timeout=TIMEOUT,
    )
    assert "cheap_rank=16" in page.url
    assert not page.recorder.errors
