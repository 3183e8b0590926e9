"""lab.write_image draws PNG and SVG with kaleido in Chromium; lab.explore() computes in the
kernel what `lab.forward` answers; lab.notebook() registers the travelling renderer."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest

from app import lab
from app.lab.renderer import TravellingRenderer, can_draw_png


@pytest.mark.slow
@pytest.mark.skipif(not can_draw_png(), reason="kaleido or Chromium not installed")
def test_png_and_svg_of_a_figure(tmp_path: Path) -> None:
    fig = lab.flow(lab.forward(d_model=8, d_ff=32, num_tokens=3))
    lab.write_image(fig, tmp_path / "flow.png", scale=1.0)
    lab.write_image(fig, tmp_path / "flow.svg")
    png = (tmp_path / "flow.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (700, fig.layout.height)  # plotly's default width, the flow's
    svg = (tmp_path / "flow.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "flow" in svg.lower()
    with pytest.raises(ValueError, match=r"\.png or an \.svg"):
        lab.write_image(fig, tmp_path / "flow.jpg")


def test_renderer_writes_plotly_js_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pio.renderers, "default", pio.renderers.default)  # restored after
    lab.notebook(png=False)
    assert pio.renderers.default == "ffn_lab"
    renderer = pio.renderers["ffn_lab"]
    assert isinstance(renderer, TravellingRenderer)
    fig = lab.flow(lab.forward(d_model=4, d_ff=16, num_tokens=2)).to_dict()
    first = pio.renderers._build_mime_bundle(fig)
    second = pio.renderers._build_mime_bundle(fig)
    assert "plotly.js v" in first["text/html"]
    assert "plotly.js v" not in second["text/html"]
    assert "Plotly.newPlot" in second["text/html"]
    assert "cdn" not in second["text/html"].lower()
    assert "application/vnd.plotly.v1+json" in second


def test_explore_computes_in_the_kernel() -> None:
    pytest.importorskip("anywidget")
    w = lab.explore(d_model=8, d_ff=32, num_tokens=4, activation="swiglu", seed=1)
    r = lab.forward(d_model=8, d_ff=32, num_tokens=4, activation="swiglu", seed=1)
    for key in ("pre_activation", "hidden", "output"):
        np.testing.assert_array_equal(np.asarray(w.data[key]["z"], dtype=np.float32), r[key])
    assert w.data["names"]["pre_activation"]["transformer_lens"] == "blocks.{layer}.mlp.hook_pre"
    w.d_ff = 64  # a slider moved (from the front end or from Python)
    assert w.data["hidden"]["shape"] == [4, 64]
    w.activation = "no-such"
    assert "activation" in w.data["error"]


@pytest.mark.skipif(not can_draw_png(), reason="kaleido or Chromium not installed")
def test_kaleidos_page_race_is_retried_once_with_a_fresh_chromium(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kaleido may read its page before it loaded ("kaleido_scopes is not defined"): the
    picture is drawn again by a fresh server; any other error is raised as it is."""
    from app.lab import renderer

    calls: list[str] = []

    def draw(fig: object, format: str, scale: float) -> bytes:
        calls.append(format)
        if len(calls) == 1:
            raise RuntimeError("ReferenceError: kaleido_scopes is not defined")
        return b"png"

    monkeypatch.setattr(renderer, "_draw", draw)
    assert renderer.image(object(), "png") == b"png" and calls == ["png", "png"]

    def broken(fig: object, format: str, scale: float) -> bytes:
        raise ValueError("another fault")

    monkeypatch.setattr(renderer, "_draw", broken)
    with pytest.raises(ValueError, match="another fault"):
        renderer.image(object(), "png")
