"""lab.flow / lab.sparsity / lab.perturbation: Plotly figures drawing the answer's own arrays."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from app import lab
from app.lab.figures.panels import DIVERGING
from app.lab.figures.parts import DIVERGING_POSITIVE


def _heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [t for t in fig.data if isinstance(t, go.Heatmap)]


def _words(text: str) -> str:
    """A title as read: its wrapped lines joined, its markup (a muted caption) left out."""
    return re.sub(r"<span[^>]*>|</span>", "", text.replace("<br>", " ")).replace("&lt;", "<")


def test_flow_draws_every_stage_with_its_shape() -> None:
    r = lab.forward(d_model=16, d_ff=64, activation="gelu", num_tokens=6)
    fig = lab.flow(r)
    maps = _heatmaps(fig)
    assert len(maps) == 4
    for trace, key in zip(maps, ["input", "pre_activation", "hidden", "output"], strict=True):
        np.testing.assert_array_equal(np.asarray(trace.z, dtype=np.float32), r[key])
        assert trace.zmin == -trace.zmax  # symmetric around 0, white at 0
        assert [list(c) for c in trace.colorscale] == DIVERGING
    titles = [_words(a.text) for a in fig.layout.annotations]
    assert any("hidden [6 × 64]" in t for t in titles)
    json.loads(fig.to_json())  # serialisable for write_html / fig.show()


def test_relu_hidden_is_drawn_on_the_upper_half_of_the_scale() -> None:
    """ReLU's hidden units are never negative: [0, max] on the diverging scale's upper half,
    ticks from 0 up, as the page draws them; the signed stages keep the whole scale."""
    r = lab.forward(d_model=16, d_ff=64, activation="relu", num_tokens=6)
    maps = dict(
        zip(["input", "pre_activation", "hidden", "output"], _heatmaps(lab.flow(r)), strict=True)
    )
    hidden = maps["hidden"]
    assert hidden.zmin == 0 and hidden.zmax == pytest.approx(float(np.max(r["hidden"])))
    assert hidden.zmid is None
    assert [list(c) for c in hidden.colorscale] == DIVERGING_POSITIVE
    assert min(hidden.colorbar.tickvals) == 0 and len(hidden.colorbar.tickvals) >= 3
    assert maps["pre_activation"].zmin == -maps["pre_activation"].zmax
    assert [list(c) for c in maps["pre_activation"].colorscale] == DIVERGING


def test_gated_flow_has_up() -> None:
    r = lab.forward(d_model=8, d_ff=16, activation="swiglu", num_tokens=3)
    maps = _heatmaps(lab.flow(r))
    assert len(maps) == 5
    np.testing.assert_array_equal(np.asarray(maps[2].z, dtype=np.float32), r["up"])


def test_summarised_answer_says_which_columns_and_labels_them() -> None:
    r = lab.forward(d_model=512, d_ff=2048, num_tokens=32, unit_start=100)
    assert r["reduction"] is not None
    fig = lab.flow(r)
    hidden = _heatmaps(fig)[2]
    np.testing.assert_array_equal(np.asarray(hidden.z, dtype=np.float32), r["hidden"])
    group = next(g for g in r["reduction"]["groups"] if "hidden" in g["tensors"])
    assert list(hidden.x) == [int(i) for i in group["kept"]]  # a window of real units
    assert hidden.x[0] == 100
    assert fig.layout.xaxis3.title.text == f"units 100–{99 + len(group['kept'])} of 2048"
    titles = " ".join(_words(a.text) for a in fig.layout.annotations)
    assert f"hidden [32 × 2048] · showing the {len(group['kept'])} of 2048 columns" in titles


def test_sparsity_bars_and_full_tensor_histogram() -> None:
    r = lab.forward(d_model=512, d_ff=2048, num_tokens=32)  # summarised heatmaps
    fig = lab.sparsity(r)
    per_token, histogram = fig.data
    np.testing.assert_allclose(np.asarray(per_token.y), r["sparsity"]["per_token"])
    counts = np.asarray(histogram.y)
    np.testing.assert_array_equal(counts, r["pre_activation_histogram"]["counts"])
    assert counts.sum() == 32 * 2048  # every pre-activation, not only the columns sent
    assert fig.layout.shapes[0].x0 == 0  # the zero line


def test_perturbation_bars_and_difference() -> None:
    p = lab.perturb(d_model=16, d_ff=64, activation="gelu", num_tokens=6, position=2, scale=1.0)
    fig = lab.perturbation(p)
    norms, delta = fig.data
    np.testing.assert_allclose(np.asarray(norms.y), p["delta_norm_per_position"])
    colors = list(norms.marker.color)
    assert colors[2] != colors[0]  # the nudged position stands out
    np.testing.assert_array_equal(np.asarray(delta.z, dtype=np.float32), p["output_delta"])


def test_chinese_titles() -> None:
    r = lab.forward(d_model=8, d_ff=16, num_tokens=3)
    fig = lab.flow(r, lang="zh-CN")
    assert fig.layout.title.text != lab.flow(r).layout.title.text


def test_flow_hover_names_each_tensor_in_other_libraries() -> None:
    """A notebook's flow figure carries the names students meet next, as the page's hover
    does: the TransformerLens hook and the Hugging Face module path of each tensor."""
    from app import lab

    result = lab.forward(d_model=4, d_ff=8, num_tokens=2)
    fig = lab.flow(result)
    hovers = " ".join(str(t.hovertemplate) for t in fig.data)
    names = dict(result)["tensor_names"]
    for key in ("pre_activation", "hidden", "output"):
        assert names[key]["transformer_lens"] in hovers
        assert names[key]["huggingface"] in hovers
