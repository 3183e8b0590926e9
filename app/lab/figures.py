"""Plotly figures of forward and perturb answers, as the page draws them.

One builder for two users: the offline HTML snapshot (POST /api/snapshot, `app.lab.snapshot`)
and the notebook (`lab.flow`, `lab.sparsity`, `lab.perturbation`, for `fig.show()` in Jupyter,
VS Code or Colab, and plotly's own `write_html` / `write_image`). Colours are the page's
(ColorBrewer RdBu, as static/js/charts.js: blue < 0 < red, white at 0, a symmetric range per
heatmap); titles, axis names and captions come from the page's message catalogs
(static/i18n/<lang>/*.json). Every heatmap shows the answer's own arrays; when an answer was
summarised for display (`reduction`), the caption says "showing k of n" and the x axis is
labelled with the real column indices, as on the page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.paths import STATIC_DIR

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

# Columns drawn at once, as static/js/windows.js: every drawn cell is one entry, no pooling.
WINDOW = {"units": 256, "features": 128}

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


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True},
        "font": {"family": "system-ui, sans-serif", "size": 12, "color": "#1a1a1a"},
        "margin": {"l": 56, "r": 16, "t": 40, "b": 48},
        "height": 340,
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


def robust_zmax(values: Any, q: float = 0.99) -> float:
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


def signed_ticks(zmax: float, n: int = 5) -> dict[str, Any]:
    """Colour-bar ticks of [-zmax, zmax]: zero and nice steps either side, about `n` in all
    (as static/js/fit.js `signedTicks`). Returns Plotly colorbar fields."""
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
    """A signed heatmap [rows, cols] with a symmetric colour range around 0.

    `x_labels`: the real column index of each drawn column (a window of a wider tensor).
    `clip_title`: the range `zmax` clips values (a robust range): the cells beyond it are
    marked × (a second trace) and the colour bar carries this title, as on the page.
    """
    values = np.asarray(z, dtype=np.float64)
    if zmax is None:
        zmax = float(np.max(np.abs(values))) if values.size else 0.0
    zmax = zmax or 1e-12
    colorbar: dict[str, Any] = {"thickness": 10, "outlinewidth": 0, **signed_ticks(zmax)}
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
        zmin=-zmax,
        zmax=zmax,
        zmid=0,
        colorscale=DIVERGING,
        colorbar=colorbar,
        hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>%{{z:+.4~g}}<extra></extra>",
    )
    layout = _layout(title, x_title, y_title)
    layout["yaxis"] |= {"autorange": "reversed"}
    layout["xaxis"] |= {"tickangle": 0}
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


def flow_panels(forward: Answer, msg: Messages) -> list[tuple[str, go.Figure]]:
    """(key, heatmap) for each stage of the flow: input, pre-activation, (up), hidden, output."""
    gated = forward["config"]["gated"]
    feature, unit = msg("axis.feature"), msg("axis.unit")
    pre = msg("flow.pre_activation_gated" if gated else "flow.pre_activation")
    stages = [
        ("input", msg("flow.input"), "features", feature),
        ("pre_activation", pre, "units", unit),
    ]
    if gated:
        stages.append(("up", msg("flow.up"), "units", unit))
    stages += [
        ("hidden", msg("flow.hidden"), "units", unit),
        ("output", msg("flow.output"), "features", feature),
    ]
    return [
        (key, windowed(forward, key, title, kind, msg, x_title))
        for key, title, kind, x_title in stages
    ]


def histogram_panel(forward: Answer, msg: Messages) -> go.Figure:
    """Pre-activation histogram with the zero line: the server's bins over the full tensor
    (`pre_activation_histogram`) when the answer has them, else the sent values binned here."""
    binned = forward.get("pre_activation_histogram")
    if binned is not None:
        edges = np.asarray(binned["edges"], dtype=np.float64)
        trace: Any = go.Bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=np.asarray(binned["counts"]),
            width=np.diff(edges),
            marker={"color": ACCENT},
        )
    else:
        trace = go.Histogram(
            x=np.asarray(forward["pre_activation"]).ravel(), nbinsx=60, marker={"color": ACCENT}
        )
    zero_line = {
        "type": "line",
        "x0": 0,
        "x1": 0,
        "y0": 0,
        "y1": 1,
        "yref": "paper",
        "line": {"color": MUTED, "width": 2},
    }
    layout = _layout(msg("sparsity.histogram"), msg("axis.value"), msg("axis.count"), bargap=0.02)
    return go.Figure(trace, layout | {"shapes": [zero_line]})


def sparsity_panels(forward: Answer, msg: Messages) -> list[tuple[str, go.Figure]]:
    """(key, figure): inactive fraction per token (bars) and the pre-activation histogram."""
    per_token = [float(v) for v in forward["sparsity"]["per_token"]]
    return [
        (
            "sparsity",
            bars(
                per_token,
                msg("sparsity.per_token"),
                msg("axis.position"),
                msg("axis.inactive_fraction"),
            ),
        ),
        ("histogram", histogram_panel(forward, msg)),
    ]


def perturbation_panels(perturb: Answer, msg: Messages) -> list[tuple[str, go.Figure]]:
    """(key, figure): ‖Δ output‖ per position (the nudged one in red) and the difference."""
    position = msg("axis.position")
    norms = [float(v) for v in perturb["delta_norm_per_position"]]
    colors = [MUTED if i == perturb["position"] else ACCENT for i in range(len(norms))]
    delta = windowed(
        perturb, "output_delta", msg("perturb.diff"), "features", msg, msg("axis.feature")
    )
    return [
        ("delta-norms", bars(norms, msg("perturb.bars"), position, msg("axis.delta_norm"), colors)),
        ("delta", delta),
    ]


def figures(forward: Answer, perturb: Answer, msg: Messages) -> list[tuple[str, go.Figure]]:
    """(id, figure) for every view of the page: the flow, sparsity and perturbation."""
    return (
        flow_panels(forward, msg)
        + sparsity_panels(forward, msg)
        + perturbation_panels(perturb, msg)
    )


def combine(
    panels: list[tuple[str, go.Figure]], captions: list[str], title: str, height: int = 380
) -> go.Figure:
    """The panels side by side in one figure, each with its own axes and colour bar."""
    fig = make_subplots(
        rows=1,
        cols=len(panels),
        subplot_titles=[
            f"{p.layout.title.text}<br><sub>{c}</sub>"
            for (_, p), c in zip(panels, captions, strict=True)
        ],
        horizontal_spacing=0.09 if len(panels) > 2 else 0.12,
    )
    for col, (_, panel) in enumerate(panels, start=1):
        axis = "" if col == 1 else str(col)
        domain = fig.layout[f"xaxis{axis}"].domain
        for trace in panel.data:
            if isinstance(trace, go.Heatmap):
                trace.colorbar.x = domain[1] + 0.005
                trace.colorbar.thickness = 8
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(panel.layout.xaxis, row=1, col=col)
        fig.update_yaxes(panel.layout.yaxis, row=1, col=col)
        for shape in panel.layout.shapes:
            fig.add_shape(shape, row=1, col=col)
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        font={"family": "system-ui, sans-serif", "size": 12, "color": "#1a1a1a"},
        height=height,
        margin={"l": 56, "r": 24, "t": 96, "b": 48},
        paper_bgcolor="white",
        plot_bgcolor="white",
        showlegend=False,
        bargap=0.02,
    )
    fig.update_annotations(font_size=12)
    return fig


def flow(forward: Answer, lang: str = "en") -> go.Figure:
    """The flow panel of a forward answer: input -> pre-activation (-> up) -> hidden -> output.

    Args:
        forward: `lab.forward(...)` (or the JSON of POST /api/forward).
        lang: "en" or "zh-CN", the language of titles and labels.

    Returns:
        One figure, a heatmap per stage ([T, d_model] or [T, d_ff], values as sent, each on a
        symmetric RdBu scale); each subtitle gives the tensor's shape and, when the answer
        was summarised, which columns are shown.
    """
    msg = Messages(lang)
    panels = flow_panels(forward, msg)
    captions = [caption(forward, key, msg) for key, _ in panels]
    return combine(panels, captions, msg("flow.heading"))


def sparsity(forward: Answer, lang: str = "en") -> go.Figure:
    """The sparsity panel: inactive fraction per token and the pre-activation histogram.

    The subtitles give the rule (exact zeros for ReLU, |h| < threshold otherwise) and the
    overall fraction, as the page's text does; the histogram counts every pre-activation of
    the full tensor (the server's bins) even when the heatmaps were summarised.
    """
    msg = Messages(lang)
    s = forward["sparsity"]
    rule = (
        msg("sparsity.rule_exact")
        if s["rule"] == "exact_zero"
        else msg("sparsity.rule_threshold", threshold=s["threshold"])
    )
    config = forward["config"]
    summary = msg(
        "sparsity.summary",
        overall=f"{float(s['overall']):.1%}",
        dead=f"{len(s['dead_neurons']):,}",
        d_ff=f"{int(config['d_ff']):,}",
        tokens=f"{int(config['num_tokens']):,}",
    )
    panels = sparsity_panels(forward, msg)
    shape = caption(forward, "pre_activation", msg)
    return combine(panels, [rule, f"{summary} · {shape}"], msg("sparsity.heading"))


def perturbation(perturb: Answer, lang: str = "en") -> go.Figure:
    """The perturbation panel: ‖Δ output‖ per position and the output difference heatmap.

    The subtitles say which rows changed and the largest change at any other position (0
    when every other row is bit-for-bit identical).
    """
    msg = Messages(lang)
    changed = ", ".join(str(int(p)) for p in perturb["changed_positions"]) or "—"
    max_other = float(perturb["max_abs_change_other_positions"])
    note = msg("perturb.changed", positions=changed)
    if max_other == 0:
        note += " " + msg("perturb.exact")
    panels = perturbation_panels(perturb, msg)
    captions = [
        note,
        msg("perturb.max_other", value="0" if max_other == 0 else f"{max_other:.3g}")
        + " · "
        + caption(perturb, "output_delta", msg),
    ]
    return combine(panels, captions, msg("perturb.heading"))
