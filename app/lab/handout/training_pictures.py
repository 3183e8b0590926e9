"""The training steps' pictures: the training panel's runs for a lesson step's settings.

Each function trains the small models of `app.lab.learning` as the page's training panel
does (static/js/panels/train.js: its task, step count and progress lines) and returns the
figure with the numbers a student reads beside it: accuracy of the three models, dead
units, the key-value reading of one unit, and the capacity sweep. Used by
`app.lab.handout.pictures.picture`, which runs them on the threads it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.lab.figures.fit import wrapped
from app.lab.figures.parts import FIGURE_WIDTH, LINE, TEXT_SIZE, Messages, _layout
from app.lab.handout.picture import Picture
from app.lab.handout.steps import Step
from app.lab.learning.capacity import capacity_sweep
from app.lab.learning.memory import TrainConfig
from app.lab.learning.train import Final, Progress, train
from app.lab.limits import Limits

# The training panel's task and settings (static/js/panels/train.js: TASK, the step count
# and the progress lines, one every steps / 50; CAPACITY_WIDTHS and the sweep's task).
TRAIN_TASK: dict[str, Any] = {"d_model": 16, "num_pairs": 64, "num_classes": 4}
TRAIN_STEPS = 300
CAPACITY_WIDTHS = [4, 8, 16, 32, 64, 128]
CAPACITY_TASK: dict[str, Any] = {"d_model": 16, "num_pairs": 512, "num_classes": 16, "steps": 500}
SERIES = ["#1b9e77", "#d95f02", "#7570b3"]  # static/js/charts/common.js SERIES


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
    "train": _train,
    "dead": _dead,
    "reading": _reading,
    "capacity": _capacity,
}
"""The training kinds of picture (`app.lab.handout.steps.PICTURES`) and their builders."""
