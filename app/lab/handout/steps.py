"""The guided lesson's steps as run configurations, for the handout.

The same data as static/js/lesson/steps.js (`LESSON_BASE` and each step's `state`; a test
reads that file with Node and compares), plus the picture each step shows in the handout:
the view the step opens on the page, or the core view the page falls back to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.model.presets import PRESETS

LESSON_BASE: dict[str, Any] = {
    "preset": "custom",
    "d_model": 16,
    "d_ff": 64,
    "activation": "relu",
    "tokens": 6,
    "bias": True,
    "seed": 0,
    "input_seed": 0,
    "position": 0,
    "scale": 1,
    "mode": "eval",
    "dropout": 0.1,
    "panel": "",
    "heads": 1,
    "norm": "post",
    "match": False,
    "dropout_seed": 0,
    "unit": -1,
}
"""Every step starts from these settings (as the page's LESSON_BASE)."""

PICTURES = (
    "attention",
    "flow",
    "sparsity",
    "perturb",
    "budget",
    "cheaper",
    "stack",
    "train",
    "dead",
    "reading",
    "capacity",
)
"""The kinds of picture a step can show (`app.lab.handout.pictures`)."""


@dataclass(frozen=True)
class Step:
    """One lesson step: its id (catalog keys `lesson.<id>.title` / `.text`), the settings it
    puts on top of `LESSON_BASE`, and the picture the handout draws for it."""

    id: str
    state: dict[str, Any] = field(default_factory=dict)
    picture: str = "flow"

    def settings(self) -> dict[str, Any]:
        """The page's settings at this step: LESSON_BASE, the step's own, then its preset's
        shape (a preset's shape wins, as on the page)."""
        s = {**LESSON_BASE, **self.state}
        preset = next((p for p in PRESETS if p.id == s["preset"]), None)
        if preset is not None:
            s |= {
                "d_model": preset.d_model,
                "d_ff": preset.d_ff,
                "activation": preset.activation,
                "bias": preset.bias,
                "tokens": len(preset.tokens) if preset.tokens else preset.num_tokens,
            }
        return s


TRAIN = {"train_d_ff": 64, "train_act": "relu"}
STEPS: tuple[Step, ...] = (
    Step("what", {"d_model": 8, "d_ff": 32}, "flow"),
    Step("shapes", {"preset": "tiny"}, "flow"),
    Step("up", {"preset": "transformer-base"}, "flow"),
    Step("activation", {}, "sparsity"),
    Step("position", {"position": 2, "scale": 2}, "perturb"),
    Step("attention", {"position": 2, "scale": 2}, "attention"),
    Step("shared", {"tokens": 12}, "flow"),
    Step("budget", {"d_model": 512, "d_ff": 2048, "tokens": 12}, "budget"),
    Step("dropout", {"mode": "train", "dropout": 0.1, "dropout_seed": 0}, "flow"),
    Step("residual", {"norm": "post"}, "flow"),
    Step("gelu", {"activation": "gelu"}, "sparsity"),
    Step("swiglu", {"activation": "swiglu"}, "flow"),
    Step("variants", {"d_model": 512, "d_ff": 2048, "match": True}, "sparsity"),
    Step("misconceptions", {"position": 2, "scale": 2}, "perturb"),
    Step("cheaper", {"d_model": 512, "d_ff": 2048, "cheap_rank": 128}, "cheaper"),
    Step(
        "depth",
        {"position": 2, "scale": 2, "layers": 6, "stack_attention": False},
        "stack",
    ),
    Step("learn", {**TRAIN, "train_lr": 0.03, "train_compare": True}, "train"),
    Step("deadzone", {**TRAIN, "train_lr": 1, "train_compare": False}, "dead"),
    Step("memory", {**TRAIN, "train_lr": 0.03, "train_compare": False}, "reading"),
    Step("capacity", {"train_act": "relu", "train_lr": 0.03}, "capacity"),
)


def forward_body(settings: dict[str, Any]) -> dict[str, Any]:
    """The POST /api/forward body the page sends for `settings` (static/js/bodies.js
    `requestBody`, without the display window: the server's default window is used)."""
    body: dict[str, Any] = {
        "d_model": settings["d_model"],
        "d_ff": settings["d_ff"],
        "activation": settings["activation"],
        "seed": settings["seed"],
        "bias": settings["bias"],
    }
    preset = next((p for p in PRESETS if p.id == settings["preset"]), None)
    if preset is not None and preset.weights is not None:
        body |= {"tokens": preset.tokens, "weights": preset.weights}
    else:
        body |= {"num_tokens": settings["tokens"], "input_seed": settings["input_seed"]}
    if settings["mode"] == "train":
        body |= {"mode": "train", "dropout": settings["dropout"]}
        if settings["dropout_seed"]:
            body["dropout_seed"] = settings["dropout_seed"]
    return body


def perturb_body(settings: dict[str, Any]) -> dict[str, Any]:
    """The POST /api/perturb body: the forward body, the nudged position and its size."""
    return forward_body(settings) | {
        "position": settings["position"],
        "scale": float(settings["scale"]),
    }
