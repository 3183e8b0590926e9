"""Each lesson step's picture and numbers, computed by the real FFN for that step's settings.

One function per kind of picture (`app.lab.handout.steps.PICTURES`): it runs the step's
configuration through `app.lab` (forward, perturb, stack, cheaper), as the page's panel
does for the same settings, and returns the figure with the numbers a student reads
beside it; the training steps' pictures are in `app.lab.handout.training_pictures`.
Titles and labels come from the page's message catalogs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import torch

from app.analysis.budget import attention_param_counts
from app.lab.contrast import attention_vs_ffn
from app.lab.figures.fit import index_ticks
from app.lab.figures.panels import flow, perturbation, sparsity
from app.lab.figures.parts import (
    ACCENT,
    DIVERGING,
    FIGURE_WIDTH,
    MUTED,
    TEXT_SIZE,
    Messages,
    _layout,
)
from app.lab.handout.picture import Picture
from app.lab.handout.steps import Step, forward_body, perturb_body
from app.lab.handout.training_pictures import BUILDERS as TRAINING_BUILDERS
from app.lab.limits import Limits
from app.lab.python_api import cheaper as run_cheaper
from app.lab.python_api import default_cache, server_threads
from app.lab.python_api import forward as run_forward
from app.lab.python_api import perturb as run_perturb
from app.lab.python_api import stack as run_stack
from app.lab.spec.specs import AttentionVsFFNSpec, build_spec


def _shape_numbers(forward: dict[str, Any], msg: Messages) -> list[str]:
    c = forward["config"]
    return [
        msg("readout.shapes", t=c["num_tokens"], d_model=c["d_model"], d_ff=c["d_ff"]),
        msg("snapshot.params", params=f"{forward['params']['total']:,}"),
    ]


def _flow(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    forward = dict(run_forward(**forward_body(s)))
    numbers = _shape_numbers(forward, msg)
    if forward["config"].get("mode") == "train":
        numbers.append(msg("handout.dropout", p=s["dropout"]))
    return Picture("flow", flow(forward, lang), numbers)


def _sparsity(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    forward = dict(run_forward(**forward_body(s)))
    sp, c = forward["sparsity"], forward["config"]
    summary = msg(
        "sparsity.summary",
        overall=f"{float(sp['overall']):.1%}",
        dead=f"{len(sp['dead_neurons']):,}",
        d_ff=f"{int(c['d_ff']):,}",
        tokens=f"{int(c['num_tokens']):,}",
    )
    return Picture("sparsity", sparsity(forward, lang), [*_shape_numbers(forward, msg), summary])


def _perturb(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    p = dict(run_perturb(**perturb_body(s)))
    most = float(p["max_abs_change_other_positions"])
    line = (
        msg("snapshot.perturb_exact", position=p["position"])
        if most == 0
        else msg("snapshot.perturb", position=p["position"], value=f"{most:.3g}")
    )
    return Picture("perturb", perturbation(p, lang), [line])


def _attention(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    limits = Limits()
    body = perturb_body(s) | {"num_heads": s["heads"], "influence": False}
    spec = build_spec(AttentionVsFFNSpec, limits, body)
    with server_threads(limits):
        answer = attention_vs_ffn(spec, default_cache(), limits)
    fig = go.Figure(
        layout=_layout(msg("perturb.bars"), msg("axis.position"), msg("axis.delta_norm"),
                       showlegend=True, barmode="group", legend={"orientation": "h", "y": -0.25})
    )  # fmt: skip
    numbers = []
    for side, color in (("attention", MUTED), ("ffn", ACCENT)):
        norms = [float(v) for v in answer[side]["delta_norm_per_position"]]
        name = msg(f"handout.{side}")
        fig.add_trace(
            go.Bar(x=list(range(len(norms))), y=norms, name=name, marker={"color": color})
        )
        numbers.append(msg("handout.moved", name=name, moved=answer[side]["moved_count"],
                           tokens=len(norms), position=answer["position"]))  # fmt: skip
    return Picture("attention", fig, numbers)


def _budget(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    forward = dict(run_forward(**forward_body(s)))
    ffn = int(forward["params"]["total"])
    attention = attention_param_counts(s["d_model"], bias=s["bias"])["total"]
    names = [msg("handout.ffn"), msg("handout.attention")]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[ffn, attention],
            marker={"color": [ACCENT, MUTED]},
            text=[f"{ffn:,}", f"{attention:,}"],
            textposition="auto",
        ),
        _layout(
            msg("handout.budget_title", d_model=s["d_model"], d_ff=s["d_ff"]),
            "",
            msg("handout.params_axis"),
        ),
    )
    share = ffn / (ffn + attention)
    numbers = [
        msg("handout.budget", ffn=f"{ffn:,}", attention=f"{attention:,}", share=f"{share:.1%}")
    ]
    return Picture("budget", fig, numbers)


def _cheaper(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    body = forward_body(s) | {"rank": int(s["cheap_rank"])}
    answer = dict(run_cheaper(**body))
    variants = answer["variants"]
    sizes = {k: answer[k] for k in ("rank", "d_inner", "num_ffns")}
    names = [msg(f"cheaper.row.{v['name']}", **sizes) for v in variants]
    totals = [int(v["params"]["total"]) for v in variants]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=totals,
            marker={"color": ACCENT},
            text=[f"{v:,}" for v in totals],
            textposition="auto",
        ),
        _layout(msg("handout.cheaper_title", rank=answer["rank"]), "", msg("handout.params_axis")),
    )
    numbers = [
        msg(
            "handout.cheaper_row",
            name=n,
            params=f"{t:,}",
            ratio=f"{v['params_ratio']:.2f}",
            error=f"{v['relative_error']:.3g}",
        )
        for n, t, v in zip(names, totals, variants, strict=True)
    ]
    return Picture("cheaper", fig, numbers)


def _stack(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    body = perturb_body(s) | {"n_layers": s["layers"], "attention": s["stack_attention"]}
    answer = dict(run_stack(**body))
    z = [list(layer["delta_norm_per_position"]) for layer in answer["layers"]]
    fig = go.Figure(
        go.Heatmap(z=z, colorscale=DIVERGING, zmid=0, colorbar={"thickness": 10}),
        _layout(msg("handout.stack_title"), msg("axis.position"), msg("handout.layer")),
    )
    layout = fig.layout
    plot_h = layout.height - layout.margin.t - layout.margin.b
    plot_w = FIGURE_WIDTH - layout.margin.l - layout.margin.r - 60
    fig.update_yaxes(autorange="reversed", **index_ticks(len(z), plot_h, TEXT_SIZE))
    fig.update_xaxes(**index_ticks(len(z[0]) if z else 0, plot_w, TEXT_SIZE))
    changed = sorted({p for layer in answer["layers"] for p in layer["changed_positions"]})
    numbers = [
        msg(
            "handout.stack",
            layers=len(z),
            positions=", ".join(map(str, changed)) or "—",
            value=f"{float(answer['max_abs_change_other_positions']):.3g}",
        )
    ]
    return Picture("stack", fig, numbers)


BUILDERS: dict[str, Callable[[Step, dict[str, Any], Messages, str], Picture]] = {
    "attention": _attention,
    "flow": _flow,
    "sparsity": _sparsity,
    "perturb": _perturb,
    "budget": _budget,
    "cheaper": _cheaper,
    "stack": _stack,
    **TRAINING_BUILDERS,
}


TRAINING = set(TRAINING_BUILDERS)


def picture(step: Step, lang: str, train_threads: int = 1) -> Picture:
    """The step's picture and numbers in `lang` ("en" or "zh-CN"), computed for its settings.

    Training runs on `train_threads` torch threads, as POST /api/train (these small models
    are many times slower spread over busy cores).

    Raises:
        ValueError: as `app.lab.python_api` for a configuration the server would refuse.
    """
    build = BUILDERS[step.picture]
    if step.picture not in TRAINING:
        return build(step, step.settings(), Messages(lang), lang)
    before = torch.get_num_threads()
    torch.set_num_threads(train_threads)
    try:
        return build(step, step.settings(), Messages(lang), lang)
    finally:
        torch.set_num_threads(before)
