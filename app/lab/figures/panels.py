"""Plotly figures of forward and perturb answers, as the page draws them.

One builder for two users: the offline HTML snapshot (POST /api/snapshot, `app.lab.snapshot`)
and the notebook (`lab.flow`, `lab.sparsity`, `lab.perturbation`, for `fig.show()` in Jupyter,
VS Code or Colab, and plotly's own `write_html` / `write_image`). Colours are the page's
(ColorBrewer RdBu, as static/js/charts.js: blue < 0 < red, white at 0, a symmetric range per
heatmap); titles, axis names and captions come from the page's message catalogs
(static/i18n/<lang>/*.json). Every heatmap shows the answer's own arrays; when an answer was
summarised for display (`reduction`), the caption says "showing k of n" and the x axis is
labelled with the real column indices, as on the page. The traces, colours and catalogs
they are made of are in `app.lab.figures.parts`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.lab.figures.fit import CELL_NUMBERS, cell_numbers, index_ticks, unwrapped, wrapped
from app.lab.figures.parts import (
    ACCENT,
    DIVERGING,
    FIGURE_WIDTH,
    LINE,
    MUTED,
    PLOT_CONFIG,
    TEXT_SIZE,
    Answer,
    Messages,
    _layout,
    bars,
    caption,
    title_block,
    title_lines,
    windowed,
)

__all__ = ["DIVERGING", "PLOT_CONFIG", "Messages", "figures", "flow", "perturbation", "sparsity"]


def flow_panels(forward: Answer, msg: Messages) -> list[tuple[str, go.Figure]]:
    """(key, heatmap) for each stage of the flow: input, pre-activation, (up), hidden, output."""
    gated = forward["config"]["gated"]
    feature, unit = msg("axis.feature"), msg("axis.unit")
    nobias = "" if forward["config"]["bias"] else "_nobias"  # the b terms only if it has them
    pre = msg(("flow.pre_activation_gated" if gated else "flow.pre_activation") + nobias)
    stages = [
        ("input", msg("flow.input"), "features", feature),
        ("pre_activation", pre, "units", unit),
    ]
    if gated:
        stages.append(("up", msg("flow.up" + nobias), "units", unit))
    stages += [
        ("hidden", msg("flow.hidden"), "units", unit),
        ("output", msg("flow.output"), "features", feature),
    ]
    names = forward.get("tensor_names") or {}
    return [
        (key, named(windowed(forward, key, title, kind, msg, x_title), names.get(key)))
        for key, title, kind, x_title in stages
    ]


def named(fig: go.Figure, names: dict[str, Any] | None) -> go.Figure:
    """`fig` with the tensor's names in other libraries in its heatmap's hover text
    (TransformerLens hook, Hugging Face module path, nnsight path: `tensor_names` of the
    answer, `app.analysis.tensor_names`)."""
    if not names:
        return fig
    said = "<br>".join(
        f"{label}: {names[key]}"
        for key, label in (
            ("transformer_lens", "TransformerLens"),
            ("huggingface", "Hugging Face"),
            ("nnsight", "nnsight"),
        )
        if names.get(key)
    )
    for trace in fig.data:
        if isinstance(trace, go.Heatmap) and trace.hovertemplate:
            trace.hovertemplate = trace.hovertemplate.replace(
                "<extra></extra>", f"<br>{said}<extra></extra>"
            )
    return fig


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


SUBTITLE_COLOR = "#444"
"""The colour of a panel's caption under its title (the page's --muted)."""


def combine(
    panels: list[tuple[str, go.Figure]], captions: list[str], title: str, height: int = 380
) -> go.Figure:
    """The panels side by side in one figure, each with its own axes and colour bar.

    Every title is wrapped to the room it has at FIGURE_WIDTH (a panel's title and caption
    to its column and the gap beside it) in TEXT_SIZE px or more; the room above the plots
    grows by the lines they take, and the plots keep `height` minus the usual margins.
    """
    spacing = 0.09 if len(panels) > 2 else 0.12
    margin = {"l": 56, "r": 24, "b": 48}
    plot_w = FIGURE_WIDTH - margin["l"] - margin["r"]
    column = plot_w * (1 - spacing * (len(panels) - 1)) / len(panels)
    subtitles = [
        _subtitle(unwrapped(p.layout.title.text or ""), c, _room(i, column, spacing, margin))
        for i, ((_, p), c) in enumerate(zip(panels, captions, strict=True))
    ]
    fig = make_subplots(
        rows=1,
        cols=len(panels),
        subplot_titles=[text for text, _ in subtitles],
        horizontal_spacing=spacing,
    )
    block, used = title_block(title_lines(title, 15), 15)
    sub_lines = max(lines for _, lines in subtitles)
    top = round(used + 8 + sub_lines * TEXT_SIZE * LINE + 6)
    plot_h = height - 96 - margin["b"]
    for col, (_, panel) in enumerate(panels, start=1):
        axis = "" if col == 1 else str(col)
        domain = fig.layout[f"xaxis{axis}"].domain
        heat = [t for t in panel.data if isinstance(t, go.Heatmap)]
        for trace in panel.data:
            if isinstance(trace, go.Heatmap):
                trace.colorbar.x = domain[1] + 0.005
                trace.colorbar.thickness = 8
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(panel.layout.xaxis, row=1, col=col)
        fig.update_yaxes(panel.layout.yaxis, row=1, col=col)
        if heat:  # index ticks spaced for this column's width, whole numbers only
            z = np.asarray(heat[0].z)
            x = heat[0].x
            first = int(x[0]) if x is not None and len(x) else 0
            fig.update_xaxes(index_ticks(z.shape[-1], column, TEXT_SIZE, first), row=1, col=col)
            fig.update_yaxes(index_ticks(z.shape[0], plot_h, TEXT_SIZE), row=1, col=col)
        if col > 1 and all(isinstance(t, go.Heatmap) for t in panel.data):
            # the first heatmap of the row names the rows (as on the page); a title here
            # would sit under the colour bar of the plot to its left
            fig.update_yaxes(title_text=None, row=1, col=col)
        for shape in panel.layout.shapes:
            fig.add_shape(shape, row=1, col=col)
    fig.update_layout(
        title=block,
        font={"family": "system-ui, sans-serif", "size": TEXT_SIZE, "color": "#1a1a1a"},
        height=top + plot_h + margin["b"],
        margin=margin | {"t": top},
        paper_bgcolor="white",
        plot_bgcolor="white",
        showlegend=False,
        bargap=0.02,
    )
    fig.update_annotations(font_size=TEXT_SIZE)
    return fig


def _room(i: int, column: float, spacing: float, margin: dict[str, int]) -> float:
    """The width (px) a title centred over column `i` may take at FIGURE_WIDTH: its column
    and half the gap on either side, and no further than the figure's edges."""
    plot_w = FIGURE_WIDTH - margin["l"] - margin["r"]
    centre = margin["l"] + i * (column + spacing * plot_w) + column / 2
    return min(column + spacing * plot_w, 2 * min(centre, FIGURE_WIDTH - centre)) - 12


def _subtitle(title: str, caption: str, width: float) -> tuple[str, int]:
    """A panel's title over its caption (muted), each wrapped to `width` px at TEXT_SIZE, as
    Plotly text; and the number of lines."""
    head = wrapped(title, width, TEXT_SIZE) if title else []
    note = wrapped(caption, width, TEXT_SIZE) if caption else []
    lines = head + [f'<span style="color:{SUBTITLE_COLOR}">{line}</span>' for line in note]
    return "<br>".join(lines), len(lines)


def print_numbers(fig: go.Figure, rows: int) -> go.Figure:
    """`fig` (a row of heatmaps by `combine`) with every heatmap's values printed in its
    cells at TEXT_SIZE px, as the page prints them for a layer small enough to check by hand
    (rules.json `cell_numbers`), where they fit the cells at FIGURE_WIDTH."""
    margin = fig.layout.margin
    plot_w = FIGURE_WIDTH - margin.l - margin.r
    plot_h = fig.layout.height - margin.t - margin.b
    for trace in fig.data:
        if not isinstance(trace, go.Heatmap):
            continue
        axis = fig.layout["xaxis" + (trace.xaxis or "x")[1:]]
        z = np.asarray(trace.z)
        columns = z.shape[-1]
        cell_w = (axis.domain[1] - axis.domain[0]) * plot_w / max(1, columns)
        numbers = cell_numbers(z, cell_w, plot_h / max(1, rows), TEXT_SIZE)
        if numbers is not None:
            trace.update(text=numbers[0], texttemplate="%{text}", textfont={"size": TEXT_SIZE})
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
    fig = combine(panels, captions, msg("flow.heading"))
    config = forward["config"]
    if max(config["d_model"], config["d_ff"]) <= CELL_NUMBERS["hand_size"]:
        print_numbers(fig, int(config["num_tokens"]))
    return fig


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
