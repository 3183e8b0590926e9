"""Named FFN configurations from the literature, plus a tiny hand-computable one."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    """One named configuration.

    Attributes:
        id: stable key used by the API and the URL.
        name: display name.
        d_model, d_ff, activation, bias: the FFN's shape (see `FFNConfig`).
        source: where the numbers come from.
        num_tokens: a sensible number of tokens to show.
        weights: fixed weights in the paper's orientation (only for the tiny preset),
            so that a class can compute x W1 + b1 by hand.
        tokens: fixed input tokens [T, d_model] to go with `weights`.
    """

    id: str
    name: str
    d_model: int
    d_ff: int
    activation: str
    bias: bool
    source: str
    num_tokens: int = 8
    weights: dict[str, list[list[float]] | list[float]] | None = None
    tokens: list[list[float]] | None = field(default=None)


PRESETS: tuple[Preset, ...] = (
    Preset(
        id="tiny",
        name="Tiny (hand-computable)",
        d_model=2,
        d_ff=4,
        activation="relu",
        bias=True,
        source="FFN Lab: small integers, so x W1 + b1 can be checked on the board",
        num_tokens=3,
        weights={
            "w1": [[1.0, -1.0, 0.0, 2.0], [0.0, 1.0, -1.0, 1.0]],
            "b1": [0.0, 0.0, 1.0, -1.0],
            "w2": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]],
            "b2": [0.0, 0.5],
        },
        tokens=[[1.0, 2.0], [-1.0, 1.0], [2.0, 0.0]],
    ),
    Preset(
        id="transformer-base",
        name="Transformer base",
        d_model=512,
        d_ff=2048,
        activation="relu",
        bias=True,
        source="Vaswani et al. 2017, Attention Is All You Need, section 3.3 and Table 3",
    ),
    Preset(
        id="bert-base",
        name="BERT-base",
        d_model=768,
        d_ff=3072,
        activation="gelu",
        bias=True,
        source="Devlin et al. 2019, BERT, section 3 (hidden 768, intermediate 3072, GELU)",
    ),
    Preset(
        id="gpt2-small",
        name="GPT-2 small",
        d_model=768,
        d_ff=3072,
        activation="gelu_tanh",
        bias=True,
        source="Radford et al. 2019, GPT-2 (n_embd 768, 4 x n_embd, gelu_new = tanh GELU)",
    ),
    Preset(
        id="llama-7b",
        name="LLaMA-7B",
        d_model=4096,
        d_ff=11008,
        activation="swiglu",
        bias=False,
        source="Touvron et al. 2023, LLaMA, section 2.2 (SwiGLU, 2/3 x 4d rounded, no biases)",
    ),
)


def get_preset(preset_id: str) -> Preset:
    """Look up a preset by id.

    Raises:
        ValueError: for an unknown id; the message lists the known ones.
    """
    for preset in PRESETS:
        if preset.id == preset_id:
            return preset
    known = ", ".join(p.id for p in PRESETS)
    raise ValueError(f"unknown preset {preset_id!r}; known: {known}")
