"""A standalone HTML snapshot of the current views, rendered by plotly.io with Plotly inlined.

The file needs no server and no network: it opens from a USB stick or inside a slide. Titles
and labels come from the same message catalogs as the page (static/i18n/<lang>/*.json).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from fastapi.templating import Jinja2Templates

import app as app_package
from app.paths import STATIC_DIR, TEMPLATES_DIR

templates = Jinja2Templates(directory=TEMPLATES_DIR)

# ColorBrewer RdBu (colour-blind safe), as static/js/charts.js: blue < 0 < red, white at 0.
DIVERGING = [
    [0.0, "#2166ac"],
    [0.125, "#4393c3"],
    [0.25, "#92c5de"],
    [0.375, "#d1e5f0"],
    [0.5, "#f7f7f7"],
    [0.625, "#fddbc7"],
    [0.75, "#f4a582"],
    [0.875, "#d6604d"],
    [1.0, "#b2182b"],
]
ACCENT = "#2166ac"
MUTED = "#b2182b"
# No modebar: its "share" button would upload the chart to Plotly's cloud (issue 10 item 10).
PLOT_CONFIG = {"displayModeBar": False, "displaylogo": False, "responsive": True}


@lru_cache
def catalog(lang: str) -> dict[str, str]:
    """Every message of `lang`, merged from static/i18n/<lang>/*.json (sorted by part)."""
    merged: dict[str, str] = {}
    for path in sorted((STATIC_DIR / "i18n" / lang).glob("*.json")):
        merged |= json.loads(path.read_text(encoding="utf-8"))
    return merged


class Messages:
    """`msg(key, **params)` fills {name} placeholders like static/js/i18n.js `t()`."""

    def __init__(self, lang: str) -> None:
        self.messages = catalog(lang)

    def __call__(self, key: str, **params: Any) -> str:
        text = self.messages.get(key, key)
        for name, value in params.items():
            text = text.replace("{" + name + "}", str(value))
        return text


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "font": {"family": "system-ui, sans-serif", "size": 12, "color": "#1a1a1a"},
        "margin": {"l": 56, "r": 16, "t": 40, "b": 48},
        "height": 340,
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        **extra,
    }


# Columns drawn at once, as static/js/windows.js: every drawn cell is one entry, no pooling.
WINDOW = {"units": 256, "features": 128}


def window(
    z: Any, key: str, forward: dict[str, Any], kind: str, msg: Messages, x_title: str
) -> tuple[np.ndarray, list[int], str]:
    """The first window of consecutive real columns of tensor `key` that the answer holds.

    Args:
        z: the tensor as sent [T, n_sent] (all columns, or those `reduction` lists).
        key: its name in the answer ("hidden", "output", ...), to find its `reduction` group.
        forward: the whole answer (for `reduction`).
        kind: "units" (d_ff) or "features" (d_model): the window's width and axis label.
        msg: the catalog, for the axis label ("units 0–255 of 2048").
        x_title: the axis title when the whole tensor fits.

    Returns:
        (z window [T, w], the real column index of each drawn column, the axis title).
    """
    array = np.asarray(z)
    total = array.shape[1]
    index = list(range(total))
    for group in (forward.get("reduction") or {}).get("groups", []):
        if key in group["tensors"]:
            total = int(group["full_shape"][1])
            index = [int(i) for i in group["kept"]]
    width = min(WINDOW[kind], array.shape[1])
    start = 0
    if index != list(range(index[0], index[0] + len(index))):
        # columns chosen by the server, not consecutive: draw the first consecutive run
        while start + 1 < len(index) and index[start + 1] != index[start] + 1:
            start += 1
        run = start + 1
        while run < len(index) and run - start < width and index[run] == index[run - 1] + 1:
            run += 1
        width = run - start
    shown = index[start : start + width]
    if len(shown) == total:
        return array, shown, x_title
    label = "window.units" if kind == "units" else "window.features"
    return (
        array[:, start : start + width],
        shown,
        msg(label, first=shown[0], last=shown[-1], total=total),
    )


def heatmap(
    z: np.ndarray, title: str, x_title: str, y_title: str, x: list[int] | None = None
) -> go.Figure:
    """A signed heatmap [rows, cols] with a symmetric colour range around 0; `x` names the
    real column of each drawn column (a window of a wider tensor)."""
    zmax = float(np.max(np.abs(z))) or 1e-12
    trace = go.Heatmap(
        z=z,
        x=x,
        zmin=-zmax,
        zmax=zmax,
        zmid=0,
        colorscale=DIVERGING,
        colorbar={"thickness": 10, "tickformat": "+.2~g", "outlinewidth": 0},
        hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>%{{z:+.4~g}}<extra></extra>",
    )
    layout = _layout(title, x_title, y_title)
    layout["yaxis"] |= {"autorange": "reversed", "automargin": True}
    layout["xaxis"] |= {"automargin": True, "tickangle": 0}
    return go.Figure(trace, layout)


def bars(
    values: list[float], title: str, x_title: str, y_title: str, colors: Any = ACCENT
) -> go.Figure:
    """One bar per position."""
    trace = go.Bar(
        x=[str(i) for i in range(len(values))],
        y=values,
        marker={"color": colors},
        hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{y:.4~g}}<extra></extra>",
    )
    layout = _layout(title, x_title, y_title)
    layout["xaxis"] |= {"type": "category"}
    return go.Figure(trace, layout)


def figures(
    forward: dict[str, Any], perturb: dict[str, Any], msg: Messages
) -> list[tuple[str, go.Figure]]:
    """(id, figure) for every view of the page: the flow, sparsity and perturbation."""
    gated = forward["config"]["gated"]
    position, feature, unit = msg("axis.position"), msg("axis.feature"), msg("axis.unit")
    pre = msg("flow.pre_activation_gated" if gated else "flow.pre_activation")

    def flow(key: str, title: str, kind: str) -> go.Figure:
        x_title = unit if kind == "units" else feature
        z, x, axis_title = window(forward[key], key, forward, kind, msg, x_title)
        return heatmap(z, title, axis_title, position, x)

    out = [
        ("input", flow("input", msg("flow.input"), "features")),
        ("pre_activation", flow("pre_activation", pre, "units")),
    ]
    if gated:
        out.append(("up", flow("up", msg("flow.up"), "units")))
    out += [
        ("hidden", flow("hidden", msg("flow.hidden"), "units")),
        ("output", flow("output", msg("flow.output"), "features")),
        (
            "sparsity",
            bars(
                forward["sparsity"]["per_token"],
                msg("sparsity.per_token"),
                position,
                msg("axis.inactive_fraction"),
            ),
        ),
    ]
    histogram = go.Figure(
        go.Histogram(
            x=np.asarray(forward["pre_activation"]).ravel(), nbinsx=60, marker={"color": ACCENT}
        ),
        _layout(
            msg("sparsity.histogram"),
            msg("axis.value"),
            msg("axis.count"),
            bargap=0.02,
            shapes=[
                {
                    "type": "line",
                    "x0": 0,
                    "x1": 0,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"color": MUTED, "width": 2},
                }
            ],
        ),
    )
    out.append(("histogram", histogram))
    norms = [float(v) for v in perturb["delta_norm_per_position"]]
    colors = [MUTED if i == perturb["position"] else ACCENT for i in range(len(norms))]
    out += [
        ("delta-norms", bars(norms, msg("perturb.bars"), position, msg("axis.delta_norm"), colors)),
        ("delta", _delta(perturb, msg, feature, position)),
    ]
    return out


def _delta(perturb: dict[str, Any], msg: Messages, feature: str, position: str) -> go.Figure:
    """The perturbation's difference heatmap, a window of its d_model features."""
    z, x, axis_title = window(
        perturb["output_delta"], "output_delta", perturb, "features", msg, feature
    )
    return heatmap(z, msg("perturb.diff"), axis_title, position, x)


def render_snapshot(forward: dict[str, Any], perturb: dict[str, Any], lang: str) -> str:
    """The whole HTML document: Plotly inlined once, then one div per figure.

    Args:
        forward: the dict `runner.forward` returns (NumPy arrays inside).
        perturb: the dict `runner.perturb` returns for the same configuration.
        lang: "en" or "zh-CN", the language of titles and labels.
    """
    msg = Messages(lang)
    divs = []
    for i, (name, fig) in enumerate(figures(forward, perturb, msg)):
        divs.append(
            pio.to_html(
                fig,
                full_html=False,
                include_plotlyjs=i == 0,
                config=PLOT_CONFIG,
                div_id=f"plot-{name}",
                validate=False,
            )
        )
    config = forward["config"]
    max_other = float(perturb["max_abs_change_other_positions"])
    context = {
        "lang": lang,
        "title": msg(
            "snapshot.title",
            d_model=config["d_model"],
            d_ff=config["d_ff"],
            activation=config["activation"],
        ),
        "heading": msg("app.title"),
        "formula": msg("app.formula"),
        "shapes": msg(
            "readout.shapes", t=config["num_tokens"], d_model=config["d_model"], d_ff=config["d_ff"]
        ),
        "params": msg("snapshot.params", params=f"{forward['params']['total']:,}"),
        "perturb": msg(
            "snapshot.perturb",
            position=perturb["position"],
            value="0" if max_other == 0 else f"{max_other:.3g}",
        ),
        "made": msg(
            "snapshot.made",
            version=app_package.__version__,
            when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        ),
        "divs": divs,
    }
    template = templates.env.get_template("snapshot.html")
    return template.render(**context)
