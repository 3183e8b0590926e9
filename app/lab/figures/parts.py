"""The pieces the figures are made of: the page's colours, message catalogs, layout, and
the heatmap / bar traces of one answer's arrays with their "showing k of n" windows.

Plotly only, no HTTP; `app.lab.figures` builds the panels from these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go

from app.lab.figures.fit import index_ticks, wrapped
from app.lab.figures.rules import RULES
from app.paths import STATIC_DIR

# ColorBrewer RdBu (colour-blind safe): blue < 0 < red, white at 0.
DIVERGING: list[list[Any]] = RULES["diverging"]
DIVERGING_POSITIVE: list[list[Any]] = [
    [(at - 0.5) * 2, colour] for at, colour in DIVERGING if at >= 0.5
]
"""The diverging scale's upper half, white at 0 to red: signed values that are never negative
(ReLU's hidden units) keep each value's colour without a blue half (as on the page:
static/js/charts/common.js)."""
ACCENT: str = RULES["accent"]
MUTED: str = RULES["muted"]
ROBUST_QUANTILE: float = RULES["robust_quantile"]
"""The quantile of |value| where a robust colour range ends (the page's robustRange)."""
# No modebar: its "share" button would upload the chart to Plotly's cloud.
PLOT_CONFIG = {"displayModeBar": False, "displaylogo": False, "responsive": True}

# Columns drawn at once, as static/js/windows.js: every drawn cell is one entry, no pooling.
WINDOW: dict[str, int] = RULES["window"]

Answer = Mapping[str, Any]
"""A forward or perturb answer: the dict `lab.forward` / `lab.perturb` return, or its JSON."""


@lru_cache
def catalog(lang: str) -> dict[str, str]:
    """Every message of `lang`, merged from static/i18n/<lang>/*.json (sorted by part)."""
    merged: dict[str, str] = {}
    for path in sorted((STATIC_DIR / "i18n" / lang).glob("*.json")):
        merged |= json.loads(path.read_text(encoding="utf-8"))
    if not merged:
        raise ValueError(f"lang = {lang!r} has no message catalog; use 'en' or 'zh-CN'")
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


FIGURE_WIDTH = 800
"""The narrowest width (px) a figure is drawn at: a handout's picture keeps at least this
width (templates/handout.html scrolls it sideways on a phone), a notebook's output is about
as wide. Titles are wrapped, index ticks spaced and cell numbers chosen for this width, so
that nothing is cut or crowded there, nor wider."""
TEXT_SIZE = 12
"""The smallest text a figure draws (px): ticks, axis titles, subtitles, cell numbers."""
TITLE_SIZE = 14
LINE = 1.3
"""Line height over font size of a wrapped title."""
TITLE_PAD = 10
"""Room above a figure's title (px)."""
TITLE_X = 0.05
"""Where a figure's title starts, over the figure's width (Plotly's template)."""


def title_lines(text: str, size: float, width: float = FIGURE_WIDTH) -> list[str]:
    """A figure's title wrapped to the room it has from TITLE_X to the right edge."""
    return wrapped(text, width * (1 - TITLE_X) - 12, size) if text else []


def title_block(lines: list[str], size: float) -> tuple[dict[str, Any], float]:
    """A figure title of `lines` at the top of the figure, and the height (px) it takes
    from the top edge with the room above and below it."""
    title = {
        "text": "<br>".join(lines),
        "font": {"size": size},
        "x": TITLE_X,
        "xanchor": "left",
        "y": 1,
        "yref": "container",
        "yanchor": "top",
        "pad": {"t": TITLE_PAD},
    }
    return title, TITLE_PAD + len(lines) * size * LINE


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    """A figure's layout: its title wrapped to FIGURE_WIDTH, and the room above the plot
    grown by the lines the title takes beyond one (the plot keeps its height)."""
    block, used = title_block(title_lines(title, TITLE_SIZE), TITLE_SIZE)
    grow = max(0, round(used + 12) - 40)
    return {
        "title": block,
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True},
        "font": {"family": "system-ui, sans-serif", "size": TEXT_SIZE, "color": "#1a1a1a"},
        "margin": {"l": 56, "r": 16, "t": 40 + grow, "b": 48},
        "height": 340 + grow,
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        **extra,
    }


def summary_of(answer: Answer, key: str) -> dict[str, Any] | None:
    """The display summary of tensor `key` (see `reduction`), or None when it was sent whole:
    {"kept": column indices, "total": the full tensor's column count}."""
    reduction = answer.get("reduction")
    for group in (reduction or {}).get("groups", []):
        if key in group["tensors"]:
            return {"kept": [int(i) for i in group["kept"]], "total": int(group["full_shape"][1])}
    return None


def caption(answer: Answer, key: str, msg: Messages) -> str:
    """`hidden [6 × 64]`, plus "showing k of n ..." when the tensor was summarised."""
    summary = summary_of(answer, key)
    shape = answer.get("shapes", {}).get(key)
    if shape is None:
        shape = list(np.shape(answer[key]))
        if summary is not None:
            shape[-1] = summary["total"]
    text = f"{key} [{' × '.join(str(n) for n in shape)}]"
    if summary is not None:
        text += " · " + msg("display.summary", kept=len(summary["kept"]), total=summary["total"])
    return text


def window(
    z: Any, key: str, answer: Answer, kind: str, msg: Messages, x_title: str
) -> tuple[np.ndarray, list[int], str]:
    """The first window of consecutive real columns of tensor `key` that the answer holds.

    Args:
        z: the tensor as sent [T, n_sent] (all columns, or those `reduction` lists).
        key: its name in the answer ("hidden", "output", ...), to find its `reduction` group.
        answer: the whole answer (for `reduction`).
        kind: "units" (d_ff) or "features" (d_model): the window's width and axis label.
        msg: the catalog, for the axis label ("units 0–255 of 2048").
        x_title: the axis title when the whole tensor fits.

    Returns:
        (z window [T, w], the real column index of each drawn column, the axis title).
    """
    array = np.asarray(z)
    total = array.shape[1]
    index = list(range(total))
    summary = summary_of(answer, key)
    if summary is not None:
        total, index = summary["total"], summary["kept"]
    width = min(WINDOW[kind], array.shape[1])
    start = 0
    if index != list(range(index[0], index[0] + len(index))):
        # columns chosen by the server (display='top_rms'): draw the first consecutive run
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


def robust_zmax(values: Any, q: float = ROBUST_QUANTILE) -> float:
    """The `q` quantile of |value| (the page's robustRange, static/js/charts/heatmap.js):
    the sorted |values| at index floor(q (n - 1)); 1e-12 for an empty or zero tensor."""
    flat = np.sort(np.abs(np.asarray(values, dtype=np.float64)).ravel())
    if not flat.size:
        return 1e-12
    zmax = float(flat[min(flat.size - 1, int(np.floor(q * (flat.size - 1))))])
    return zmax or float(flat[-1]) or 1e-12


def _signed_label(v: float) -> str:
    """ "+1.5", "0", "−0.25": zero unsigned (a "+.2~g" format prints "+0"), U+2212 minus."""
    if v == 0:
        return "0"
    a = abs(v)
    text = f"{a:.1e}".replace(".0e", "e") if a < 1e-3 or a >= 1e5 else f"{float(f'{a:.3g}'):g}"
    return ("+" if v > 0 else "−") + text


def signed_ticks(zmax: float, n: int = 5, positive: bool = False) -> dict[str, Any]:
    """Colour-bar ticks of [-zmax, zmax]: zero and nice steps either side, about `n` in all
    (as static/js/fit.js `signedTicks`); with `positive`, of [0, zmax] (a bar of positive
    values only: twice the steps on its side). Returns Plotly colorbar fields."""
    if positive:
        ticks = signed_ticks(zmax, 2 * n - 1)
        kept = [(v, t) for v, t in zip(ticks["tickvals"], ticks["ticktext"], strict=True) if v >= 0]
        return {
            "tickmode": "array",
            "tickvals": [v for v, _ in kept],
            "ticktext": [t for _, t in kept],
        }
    m = abs(zmax)
    if not m > 0:
        values = [0.0]
    else:
        half = max(1, (n - 1) // 2)
        raw = m / half
        mag = 10 ** np.floor(np.log10(raw))
        step = next((k * mag for k in (1, 2, 2.5, 5, 10) if k * mag >= raw * (1 - 1e-9)), 10 * mag)
        k = int(np.floor(m / step + 1e-9))
        if k < 1:
            mm = 10 ** np.floor(np.log10(m))
            end = next((f * mm for f in (5, 2.5, 2, 1) if f * mm <= m * (1 + 1e-9)), mm)
            values = [-end, 0.0, end]
        else:
            values = [float(f"{i * step:.12g}") for i in range(-k, k + 1)]
    return {"tickmode": "array", "tickvals": values, "ticktext": [_signed_label(v) for v in values]}


def heatmap(
    z: Any,
    title: str,
    x_title: str,
    y_title: str,
    x_labels: list[int] | None = None,
    zmax: float | None = None,
    clip_title: str | None = None,
) -> go.Figure:
    """A signed heatmap [rows, cols] with a symmetric colour range around 0; values none
    of which is negative (ReLU's hidden units) with no `zmax` given: [0, max] on the scale's
    upper half (`DIVERGING_POSITIVE`), each value in the colour the whole scale gives it.

    `x_labels`: the real column index of each drawn column (a window of a wider tensor).
    `clip_title`: the range `zmax` clips values (a robust range): the cells beyond it are
    marked × (a second trace) and the colour bar carries this title, as on the page.
    """
    values = np.asarray(z, dtype=np.float64)
    finite = values[np.isfinite(values)]
    positive = zmax is None and finite.size > 0 and finite.min() >= 0 and finite.max() > 0
    if zmax is None:
        zmax = float(np.max(np.abs(values))) if values.size else 0.0
    zmax = zmax or 1e-12
    colorbar: dict[str, Any] = {
        "thickness": 10,
        "outlinewidth": 0,
        **signed_ticks(zmax, positive=bool(positive)),
    }
    traces: list[Any] = []
    rows, cols = np.nonzero(np.abs(values) > zmax) if values.ndim == 2 else ((), ())
    if clip_title is not None and len(rows):
        colorbar["title"] = {"text": clip_title, "side": "top"}
        xs = [x_labels[c] if x_labels is not None else int(c) for c in cols]
        traces.append(
            go.Scatter(
                x=xs,
                y=[int(r) for r in rows],
                mode="markers",
                marker={"symbol": "x-thin", "size": 6, "line": {"width": 1.5, "color": "#111"}},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    trace = go.Heatmap(
        z=values,
        x=x_labels,
        zmin=0 if positive else -zmax,
        zmax=zmax,
        zmid=None if positive else 0,
        colorscale=DIVERGING_POSITIVE if positive else DIVERGING,
        colorbar=colorbar,
        hovertemplate=(
            f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>{title} = %{{z:.4~g}}<extra></extra>"
        ),
    )
    layout = _layout(title, x_title, y_title)
    # index axes: ticks on whole cells only (Plotly's own would fall on 0.5, 1.5 of a few cells)
    rows_n, cols_n = values.shape if values.ndim == 2 else (1, values.size)
    plot_w = FIGURE_WIDTH - layout["margin"]["l"] - layout["margin"]["r"] - 60
    plot_h = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    first = x_labels[0] if x_labels else 0
    layout["yaxis"] |= {"autorange": "reversed", **index_ticks(rows_n, plot_h, TEXT_SIZE)}
    layout["xaxis"] |= {"tickangle": 0, **index_ticks(cols_n, plot_w, TEXT_SIZE, first)}
    return go.Figure([trace, *traces], layout)


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


def windowed(
    answer: Answer, key: str, title: str, kind: str, msg: Messages, x_title: str
) -> go.Figure:
    """The heatmap of a window of tensor `key`'s real columns, the window named on its axis.

    A pretrained layer's answer (config `model`) is coloured as on the page: by the 99th
    percentile of |value| of the whole tensor sent, the cells beyond it marked ×.
    """
    z, x, axis_title = window(answer[key], key, answer, kind, msg, x_title)
    if answer.get("config", {}).get("model"):
        zmax = robust_zmax(answer[key])
        return heatmap(z, title, axis_title, msg("axis.position"), x, zmax, msg("clip.bar"))
    return heatmap(z, title, axis_title, msg("axis.position"), x)
