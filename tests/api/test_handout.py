"""POST /api/handout: the guided lesson as one offline HTML file, every step with its
picture computed by the real FFN, its numbers, sentence and link back to the step."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.lab.handout.steps import STEPS
from app.main import create_app

ROOT = Path(__file__).resolve().parents[2]


def _catalog(lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted((ROOT / "static" / "i18n" / lang).glob("*.json")):
        out |= json.loads(f.read_text(encoding="utf-8"))
    return out


def figure_data(html: str, div_id: str) -> list[dict]:
    """The traces Plotly.newPlot draws into `div_id`, arrays decoded."""
    start = html.index(f'"{div_id}"', html.index(f'<div id="{div_id}"') + 10)
    data, _ = json.JSONDecoder().raw_decode(html, html.index("[", start))
    for trace in data:
        z = trace.get("z")
        if isinstance(z, dict):  # plotly 6 writes arrays as base64 typed arrays
            flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
            shape = [int(n) for n in str(z.get("shape", len(flat))).split(",")]
            trace["z"] = flat.reshape(shape)
    return data  # type: ignore[no-any-return]


def figure_layout(html: str, div_id: str) -> dict:
    """The layout Plotly.newPlot draws `div_id` with (the object after its traces)."""
    start = html.index(f'"{div_id}"', html.index(f'<div id="{div_id}"') + 10)
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(html, html.index("[", start))
    layout, _ = decoder.raw_decode(html, html.index("{", end))
    return layout  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def handout_en() -> str:
    """The English handout, built once for this module (about 20 steps of real work)."""
    with TestClient(create_app()) as c:
        r = c.post("/api/handout", json={"lang": "en", "base_url": "https://lab.example/ffn/"})
    assert r.status_code == 200, r.text
    assert "ffn-lab_lesson-handout_en.html" in r.headers["content-disposition"]
    return r.text


def test_every_step_has_its_picture_sentence_numbers_and_link(handout_en: str) -> None:
    html = handout_en
    en = _catalog("en")
    steps = re.findall(r'<section class="step" id="step-(\d+)"', html)
    assert steps == [str(n) for n in range(1, len(STEPS) + 1)] and len(steps) == 20
    plots = re.findall(r'<div id="handout-plot-(\d+)" class="plotly-graph-div"', html)
    assert plots == steps
    for n, step in enumerate(STEPS, start=1):
        assert f'href="https://lab.example/ffn/?lesson=1&amp;step={n}&amp;lang=en"' in html
        title = en[f"lesson.{step.id}.title"].replace("&", "&amp;")
        assert title in html
    # a sentence that asks for a move on the page says where: the step's link
    assert "press Train" in en["lesson.deadzone.text"]
    assert en["handout.step.deadzone.text"].split(":")[0] in html
    assert "On the page (the link below), pick GELU" in html
    # Plotly inlined exactly once, nothing loaded from elsewhere
    assert html.count("plotly.js v") == 1 or html.count("* plotly.js") == 1
    assert len(re.findall(r"Plotly\.newPlot", html)) == 20
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+href=", html)
    assert '<html lang="en">' in html and "Language: English" in html


def test_pictures_hold_the_apis_numbers(client: TestClient, handout_en: str) -> None:
    """Step 1's output heatmap is /api/forward's output for that step's settings; the
    training step's numbers are /api/train's parameter counts."""
    body = {"d_model": 8, "d_ff": 32, "activation": "relu", "seed": 0, "bias": True,
            "num_tokens": 6, "input_seed": 0}  # fmt: skip
    forward = client.post("/api/forward", json=body).json()
    data = figure_data(handout_en, "handout-plot-1")
    heatmaps = [t for t in data if t["type"] == "heatmap"]
    assert len(heatmaps) == 4  # input, pre-activation, hidden, output
    for trace, key in zip(heatmaps, ("input", "pre_activation", "hidden", "output"), strict=True):
        expected = np.asarray(forward[key], dtype=np.float32)
        np.testing.assert_allclose(np.asarray(trace["z"]).reshape(expected.shape), expected)
    learn = handout_en[handout_en.index('id="step-17"') : handout_en.index('id="step-18"')]
    assert "2,196 parameters, 64 of 64 pairs memorised" in learn
    assert "340 parameters" in learn
    assert learn.count("2,196 parameters") == 2  # the FFN and the same-budget linear control


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"lang": "fr"}, "zh-CN"),
        ({"base_url": "javascript:alert(1)"}, "base_url"),
        ({"base_url": "https://x/" + "a" * 600}, "500"),
        ({"steps": 3}, "steps"),
    ],
)
def test_bad_bodies_are_422(client: TestClient, body: dict, words: str) -> None:
    r = client.post("/api/handout", json=body)
    assert r.status_code == 422, r.text
    assert words in r.text


def test_index_axes_tick_whole_numbers_and_small_heatmaps_print_their_numbers(
    handout_en: str,
) -> None:
    """Every heatmap's axes count cells (tokens, units, features, layers): their ticks fall
    on whole numbers only. The tiny preset's flow (step 2, 2 -> 4 -> 2) prints every value
    in its cell, as the page does for a layer that small, in 12 px."""
    for n in range(1, len(STEPS) + 1):
        data = figure_data(handout_en, f"handout-plot-{n}")
        layout = figure_layout(handout_en, f"handout-plot-{n}")
        for trace in (t for t in data if t["type"] == "heatmap"):
            for axis in ("x", "y"):
                name = trace.get(f"{axis}axis", axis).replace(axis, f"{axis}axis", 1)
                ticks = layout[name]
                assert ticks.get("tickmode") == "linear", (n, name, ticks)
                assert float(ticks["dtick"]).is_integer() and ticks["dtick"] >= 1, (n, name)
                assert float(ticks["tick0"]).is_integer(), (n, name)
    tiny = [t for t in figure_data(handout_en, "handout-plot-2") if t["type"] == "heatmap"]
    assert len(tiny) == 4
    for trace in tiny:
        z = np.asarray(trace["z"])
        expected = [["0" if v == 0 else f"{v:+g}" for v in row] for row in z.tolist()]
        assert trace["text"] == expected
        assert trace["texttemplate"] == "%{text}" and trace["textfont"]["size"] >= 12
    # a wider layer's cells are too narrow for numbers (the page prints none either)
    assert all("text" not in t for t in figure_data(handout_en, "handout-plot-1"))
