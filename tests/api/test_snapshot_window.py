"""No pooling in the HTML snapshot: wide heatmaps draw a window of real columns.

No pooling and no silent choice of columns: the snapshot's hidden heatmap holds units
0-255 of the layer's 2048 exactly as /api/forward computes them, and its axis says so.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

BODY = {"d_model": 512, "d_ff": 2048, "activation": "relu", "num_tokens": 8}


def _array(value: Any) -> np.ndarray:
    if isinstance(value, dict):  # plotly 6 writes arrays as base64 typed arrays
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return out.reshape([int(s) for s in str(shape).split(",")]) if shape else out
    return np.asarray(value)


def _figure(html: str, plot: str) -> tuple[dict[str, Any], dict[str, Any]]:
    start = html.index(f'"{plot}"')
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(html, html.index("[", start))
    layout, _ = decoder.raw_decode(html, html.index("{", end))
    return data[0], layout


def test_snapshot_draws_a_window_of_real_units(client: TestClient) -> None:
    html = client.post("/api/snapshot", json={**BODY, "position": 0}).text
    forward = client.post("/api/forward", json=BODY).json()
    trace, layout = _figure(html, "plot-hidden")
    x = _array(trace["x"]).tolist()
    assert x == list(range(256))
    z = _array(trace["z"]).reshape(8, 256)
    expected = np.asarray(forward["hidden"], dtype=np.float32)[:, :256]
    np.testing.assert_allclose(z, expected, atol=1e-6)
    assert layout["xaxis"]["title"]["text"] == "units 0–255 of 2048"
    # the drawn cells keep the layer's sparsity (ReLU: about half are exact zeros)
    drawn = float(np.mean(z == 0))
    assert abs(drawn - forward["sparsity"]["overall"]) < 0.05
    # d_model features: a window of 128 of 512, named on the axis
    trace, layout = _figure(html, "plot-input")
    assert _array(trace["x"]).tolist() == list(range(128))
    assert layout["xaxis"]["title"]["text"] == "features 0–127 of 512"


def test_small_snapshot_draws_every_column(client: TestClient) -> None:
    body = {"d_model": 5, "d_ff": 13, "activation": "relu", "num_tokens": 4, "position": 1}
    html = client.post("/api/snapshot", json=body).text
    trace, layout = _figure(html, "plot-hidden")
    assert _array(trace["x"]).tolist() == list(range(13))
    assert layout["xaxis"]["title"]["text"] == "hidden unit (d_ff)"
