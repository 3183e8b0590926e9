"""POST /api/snapshot: a standalone HTML file with Plotly inlined, titles from the catalogs."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from app.lab.figures.panels import Messages, flow_panels

ROOT = Path(__file__).resolve().parents[2]
BODY = {
    "d_model": 5,
    "d_ff": 13,
    "activation": "relu",
    "num_tokens": 4,
    "position": 1,
    "scale": 1.0,
}


def _catalog(lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted((ROOT / "static" / "i18n" / lang).glob("*.json")):
        out |= json.loads(f.read_text(encoding="utf-8"))
    return out


def test_snapshot_is_a_standalone_html_file(client: TestClient) -> None:
    response = client.post("/api/snapshot", json=BODY)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "attachment" in response.headers["content-disposition"]
    assert "ffn-lab_5x13_relu_T4_snapshot.html" in response.headers["content-disposition"]
    html = response.text
    # Plotly inlined exactly once, and nothing loaded from elsewhere.
    assert html.count("plotly.js v") >= 1
    assert len(html) > 3_000_000
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+href=", html)
    assert not re.search(r"<(?:img|iframe)[^>]+src=", html)
    # One div per view: input, pre_activation, hidden, output, sparsity, histogram, 2 perturb.
    assert len(re.findall(r'<div id="plot-[\w-]+" class="plotly-graph-div"', html)) == 8
    en = _catalog("en")
    assert en["flow.hidden"] in html
    assert "d_model = 5" in html


def test_snapshot_gated_has_up_view_and_chinese_titles(client: TestClient) -> None:
    body = {**BODY, "activation": "swiglu", "lang": "zh-CN"}
    html = client.post("/api/snapshot", json=body).text
    zh = _catalog("zh-CN")
    assert '<html lang="zh-CN">' in html
    assert json.dumps(zh["flow.up"])[1:-1] in html or zh["flow.up"] in html
    assert zh["snapshot.made"].split("{")[0] in html
    assert len(re.findall(r'<div id="plot-[\w-]+" class="plotly-graph-div"', html)) == 9


def test_snapshot_numbers_match_forward(client: TestClient) -> None:
    """The heatmap of the output holds the same numbers /api/forward returns."""
    html = client.post("/api/snapshot", json=BODY).text
    forward = client.post(
        "/api/forward", json={k: v for k, v in BODY.items() if k not in ("position", "scale")}
    ).json()
    start = html.index('"plot-output"')
    data, _ = json.JSONDecoder().raw_decode(html, html.index("[", start))
    z = data[0]["z"]
    if isinstance(z, dict):  # plotly 6 writes arrays as base64 typed arrays
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    expected = np.asarray(forward["output"], dtype=np.float32)
    np.testing.assert_allclose(np.asarray(z).reshape(expected.shape), expected, atol=1e-4)


def test_snapshot_rejects_unknown_language_and_bad_position(client: TestClient) -> None:
    response = client.post("/api/snapshot", json={**BODY, "lang": "fr"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "lang"
    response = client.post("/api/snapshot", json={**BODY, "position": 9})
    assert response.status_code == 422
    assert "position = 9" in response.json()["detail"][0]["msg"]


def test_snapshot_formula_is_the_ffn_that_ran(client: TestClient) -> None:
    """Plain or gated, with or without biases: the heading's formula has b terms only when
    the FFN had biases."""
    en = _catalog("en")
    cases = {
        ("relu", True): "app.formula",
        ("relu", False): "app.formula_nobias",
        ("swiglu", True): "app.formula_gated",
        ("swiglu", False): "app.formula_gated_nobias",
    }
    for (activation, bias), key in cases.items():
        html = client.post(
            "/api/snapshot", json={**BODY, "activation": activation, "bias": bias}
        ).text
        formula = re.search(r'<p class="mono">(.*?)</p>', html)
        assert formula is not None
        assert formula.group(1) == en[key], (activation, bias)
        assert ("b₁" in formula.group(1) or "b_gate" in formula.group(1)) == bias
        # the flow's plot titles too
        body = {k: v for k, v in BODY.items() if k not in ("position", "scale")}
        forward = client.post(
            "/api/forward", json={**body, "activation": activation, "bias": bias}
        ).json()
        titles = [fig.layout.title.text for _, fig in flow_panels(forward, Messages("en"))]
        with_b = [title for title in titles if "+ b" in title]
        assert bool(with_b) == bias, (activation, bias, titles)
