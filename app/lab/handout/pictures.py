"""Each lesson step's picture and numbers, computed by the real FFN for that step's settings.

One function per kind of picture (`app.lab.handout.steps.PICTURES`): it runs the step's
configuration through `app.lab` (forward, perturb, stack, cheaper) or the training of
`app.lab.learning`, as the page's panel does for the same settings, and returns the
figure with the numbers a student reads beside it. Titles and labels come from the
page's message catalogs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from app.analysis.budget import attention_param_counts
from app.lab.contrast import attention_vs_ffn
from app.lab.figures.fit import index_ticks, wrapped
from app.lab.figures.panels import flow, perturbation, sparsity
from app.lab.figures.parts import (
    ACCENT,
    DIVERGING,
    FIGURE_WIDTH,
    LINE,
    MUTED,
    TEXT_SIZE,
    Messages,
    _layout,
)
from app.lab.handout.steps import Step, forward_body, perturb_body
from app.lab.learning.capacity import capacity_sweep
from app.lab.learning.memory import TrainConfig
from app.lab.learning.train import Final, Progress, train
from app.lab.limits import Limits
from app.lab.python_api import cheaper as run_cheaper
from app.lab.python_api import default_cache, server_threads
from app.lab.python_api import forward as run_forward
from app.lab.python_api import perturb as run_perturb
from app.lab.python_api import stack as run_stack
from app.lab.spec.specs import AttentionVsFFNSpec, build_spec

# The training panel's task and settings (static/js/panels/train.js: TASK, the step count
# and the progress lines, one every steps / 50; CAPACITY_WIDTHS and the sweep's task).
TRAIN_TASK: dict[str, Any] = {"d_model": 16, "num_pairs": 64, "num_classes": 4}
TRAIN_STEPS = 300
CAPACITY_WIDTHS = [4, 8, 16, 32, 64, 128]
CAPACITY_TASK: dict[str, Any] = {"d_model": 16, "num_pairs": 512, "num_classes": 16, "steps": 500}
SERIES = ["#1b9e77", "#d95f02", "#7570b3"]  # static/js/charts/common.js SERIES


@dataclass(frozen=True)
class Picture:
    """A step's figure, the numbers shown beside it, and the figure's data key (`kind`)."""

    kind: str
    figure: go.Figure
    numbers: list[str]


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


def _config(s: dict[str, Any], **extra: Any) -> TrainConfig:
    steps = TRAIN_STEPS
    return TrainConfig(
        d_ff=s.get("train_d_ff", 64),
        activation=s.get("train_act", "relu"),
        lr=float(s.get("train_lr", 0.03)),
        steps=steps,
        seed=s["seed"],
        log_every=max(1, round(steps / 50)),
        threshold=Limits().sparsity_threshold,
        **{**TRAIN_TASK, **extra},
    )


def _run(config: TrainConfig) -> tuple[list[Progress], Final]:
    records = list(train(config))
    final = records[-1]
    if not isinstance(final, Final):  # pragma: no cover - train always ends with Final
        raise RuntimeError("training ended without a final record")
    return [r for r in records if isinstance(r, Progress)], final


MODELS: tuple[tuple[str, bool, bool], ...] = (
    ("ffn", True, False),
    ("linear", False, False),
    ("same_budget", False, True),
)
"""The training panel's three models: (kind, ffn, same_budget)."""
NAMES = {"ffn": "train.with_ffn", "linear": "train.without_ffn", "same_budget": "train.same_budget"}


def _train(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    base = _config(s)
    runs = [(kind, *_run(replace(base, ffn=ffn, same_budget=same))) for kind, ffn, same in MODELS]
    fig = go.Figure(
        layout=_layout(
            msg("train.accuracy_title"), msg("train.step"), msg("train.accuracy"), showlegend=True
        )
    )
    numbers = []
    for (kind, progress, final), color in zip(runs, SERIES, strict=True):
        name = msg(NAMES[kind])
        fig.add_trace(
            go.Scatter(
                x=[p.step for p in progress],
                y=[p.accuracy for p in progress],
                name=name,
                line={"color": color},
            )
        )
        numbers.append(
            msg(
                "handout.model_row",
                name=name,
                params=f"{final.params['total']:,}",
                memorised=final.memorised,
                pairs=final.num_pairs,
            )
        )
    fig.update_layout(legend={"orientation": "h", "y": -0.25}, yaxis_range=[0, 1.05])
    return Picture("train", fig, numbers)


def _dead(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    progress, final = _run(_config(s))
    fig = go.Figure(
        go.Scatter(
            x=[p.step for p in progress],
            y=[p.dead_units for p in progress],
            line={"color": SERIES[0]},
        ),
        _layout(msg("train.dead_title"), msg("train.step"), msg("train.dead_units")),
    )
    d_ff = _config(s).d_ff
    numbers = [msg("handout.dead", dead=len(final.dead_unit_indices), d_ff=d_ff, lr=s["train_lr"])]
    return Picture("dead", fig, numbers)


def _reading(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    _, final = _run(_config(s))
    r = final.reading
    if r is None:  # pragma: no cover - an FFN run always has a reading
        raise RuntimeError("the FFN run has no key-value reading")
    classes = len(r.value_logits)
    colors = [SERIES[2] if c == r.top_class else "#9a9a9a" for c in range(classes)]
    fires = set(r.fires_on)
    spacing, layout = (
        0.14,
        _layout("", "", "", showlegend=True, legend={"orientation": "h", "y": -0.3}),
    )
    plot_w = FIGURE_WIDTH - layout["margin"]["l"] - layout["margin"]["r"]
    room = plot_w * (1 - spacing) / 2 + plot_w * spacing - 12
    titles = [
        wrapped(msg("train.key_title", unit=r.unit), room, TEXT_SIZE),
        wrapped(msg("train.value_title", unit=r.unit), room, TEXT_SIZE),
    ]
    grow = round((max(map(len, titles)) - 1) * TEXT_SIZE * LINE)
    layout["margin"]["t"] += grow
    layout["height"] += grow
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=spacing,
        subplot_titles=["<br>".join(lines) for lines in titles],
    )
    for want, name, color in ((True, "train.fires", SERIES[0]), (False, "train.silent", SERIES[1])):
        keys = [i for i in range(len(r.key_cosine)) if (i in fires) == want]
        fig.add_trace(
            go.Scatter(
                x=[float(r.key_cosine[i]) for i in keys],
                y=[float(r.key_activation[i]) for i in keys],
                mode="markers",
                name=msg(name),
                marker={"color": color},
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Bar(
            x=[str(c) for c in range(classes)],
            y=[float(v) for v in r.value_logits],
            marker={"color": colors},
            showlegend=False,
            text=[msg("train.keys_n", n=n) for n in r.target_counts],
        ),
        row=1,
        col=2,
    )
    fig.update_layout(layout)
    fig.update_xaxes(title_text=msg("train.cosine"), row=1, col=1)
    fig.update_yaxes(title_text=msg("train.activation_value"), row=1, col=1)
    fig.update_xaxes(title_text=msg("train.class"), row=1, col=2)
    fig.update_yaxes(title_text=msg("train.logit"), row=1, col=2)
    fig.update_annotations(font_size=TEXT_SIZE)
    agreement = "—" if r.agreement is None else f"{r.agreement:.0%}"
    numbers = [
        msg(
            "train.reading",
            unit=r.unit,
            fires=len(r.fires_on),
            pairs=final.num_pairs,
            top=r.top_class,
            agreement=agreement,
            classes=classes,
            chance=f"{1 / max(1, classes):.0%}",
        )
    ]
    return Picture("reading", fig, numbers)


def _capacity(step: Step, s: dict[str, Any], msg: Messages, lang: str) -> Picture:
    base = replace(_config(s), d_ff=CAPACITY_WIDTHS[0], log_every=5, **CAPACITY_TASK)
    points = list(capacity_sweep(base, CAPACITY_WIDTHS, include_no_ffn=True))
    labels = [msg("train.no_ffn") if p.d_ff is None else str(p.d_ff) for p in points]
    values = [p.memorised_fraction for p in points]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            text=[f"{v:.0%}" for v in values],
            marker={"color": [SERIES[1] if p.d_ff is None else SERIES[0] for p in points]},
        ),
        _layout(
            msg("train.capacity_title", pairs=base.num_pairs),
            msg("train.d_ff"),
            msg("train.memorised"),
        ),
    )
    fig.update_yaxes(range=[0, 1.1])
    numbers = [
        msg(
            "handout.capacity",
            pairs=base.num_pairs,
            points=", ".join(f"{label}: {v:.0%}" for label, v in zip(labels, values, strict=True)),
        )
    ]
    return Picture("capacity", fig, numbers)


BUILDERS: dict[str, Callable[[Step, dict[str, Any], Messages, str], Picture]] = {
    "attention": _attention,
    "flow": _flow,
    "sparsity": _sparsity,
    "perturb": _perturb,
    "budget": _budget,
    "cheaper": _cheaper,
    "stack": _stack,
    "train": _train,
    "dead": _dead,
    "reading": _reading,
    "capacity": _capacity,
}


TRAINING = {"train", "dead", "reading", "capacity"}


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
