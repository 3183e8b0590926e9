"""lab.explore()'s front end (static/js/notebook/explore.js) in Chromium: it draws what the
kernel computed and sends slider moves back; the widget's comm is played by the test, which
runs the kernel side (app.lab.explore) in this process."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from app import lab

pytestmark = pytest.mark.browser
anywidget = pytest.importorskip("anywidget")

HARNESS = """async ([state]) => {
  const { default: widget } = await import("/static/js/notebook/explore.js");
  const listeners = {};
  window.sent = [];
  window.model = {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; (listeners[`change:${k}`] || []).forEach((f) => f()); },
    on: (e, f) => { (listeners[e] ||= []).push(f); },
    save_changes: () => { window.sent.push(JSON.stringify(state)); },
  };
  const el = document.createElement("div");
  el.id = "widget";
  document.body.replaceChildren(el);
  widget.render({ model: window.model, el });
}"""

PIXEL = """([key, row, col]) => {
  const canvas = document.querySelector(`figure[data-tensor='${key}'] canvas`);
  const cell = canvas.height / window.model.get("data")[key].shape[0];
  const ctx = canvas.getContext("2d");
  const [r, g, b] = ctx.getImageData(col * cell + cell / 2, row * cell + cell / 2, 1, 1).data;
  return [r, g, b, canvas.width, canvas.height, cell];
}"""


def state_of(w: Any) -> dict[str, Any]:
    names = ("d_model", "d_ff", "num_tokens", "activation", "seed", "options", "data")
    return json.loads(json.dumps({k: getattr(w, k) for k in names}))


def test_widget_draws_the_kernels_flow_and_sends_slider_moves(page, server_url):  # type: ignore[no-untyped-def]
    w = lab.explore(d_model=8, d_ff=32, num_tokens=4, activation="gelu", seed=2)
    page.goto(f"{server_url}/api/health")
    page.evaluate(HARNESS, [state_of(w)])
    page.locator("figure[data-tensor='output'] canvas").wait_for()
    assert page.locator("#widget input[type=range]").count() == 4  # d_model, d_ff, T, seed
    assert page.locator("#widget select[name=activation] option").count() == 7
    # the cell of largest |hidden| is drawn in the scale's end colour
    hidden = np.asarray(w.data["hidden"]["z"])
    row, col = np.unravel_index(int(np.argmax(np.abs(hidden))), hidden.shape)
    r, g, b, width, height, cell = page.evaluate(PIXEL, ["hidden", int(row), int(col)])
    end = (0xB2, 0x18, 0x2B) if hidden[row, col] > 0 else (0x21, 0x66, 0xAC)
    assert max(abs(a - e) for a, e in zip((r, g, b), end, strict=True)) <= 2
    assert (width, height) == (32 * cell, 4 * cell)

    # a slider moved in the page is sent to the kernel, which answers a new flow
    page.locator("#widget input[name=d_ff]").fill("4")  # the 5th step of 16, 32, ... 2048
    sent = json.loads(page.evaluate("window.sent.at(-1)"))
    assert sent["d_ff"] == 256
    w.d_ff = sent["d_ff"]  # the comm: the kernel side receives it and recomputes
    page.evaluate("([data]) => window.model.set('data', data)", [state_of(w)["data"]])
    r, g, b, width, height, cell = page.evaluate(PIXEL, ["hidden", 0, 0])
    assert (width, height) == (256 * cell, 4 * cell)
    caption = page.locator("figure[data-tensor='hidden'] figcaption").inner_text()
    assert caption.startswith("hidden [4 × 256]")
    assert page.locator("figure[data-tensor='hidden']").get_attribute("title") == (
        "blocks.{layer}.mlp.hook_post"
    )

    # a refused value is said where the flow is, and the flow is dimmed
    w.activation = "no-such"
    page.evaluate("([data]) => window.model.set('data', data)", [state_of(w)["data"]])
    assert "activation" in page.locator("#widget [role=alert]").inner_text()
