"""One registry of activations: the same keys feed the model, the API enum and the page.

Gated variants follow Shazeer 2020, "GLU Variants Improve Transformer" and LLaMA's
gate/up/down naming: ``hidden = act(x W_gate + b_gate) * (x W1 + b1)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import nn


@dataclass(frozen=True)
class ActivationSpec:
    """One supported activation.

    Attributes:
        name: registry key, used by the API (`activation`), the URL and the page.
        label: human-readable name, e.g. "SwiGLU".
        gated: True when the FFN has a third matrix `w_gate` and multiplies
            `act(x W_gate + b_gate)` element-wise with `x W1 + b1`.
        formula: LaTeX of the element-wise function applied to the pre-activation `z`.
        exact_zeros: True when inactive units are exactly 0 (ReLU), so sparsity
            counts exact zeros; otherwise sparsity counts `|h| < threshold`.
        source: the paper that introduced it.
        factory: builds the `torch.nn` module for the element-wise function.
    """

    name: str
    label: str
    gated: bool
    formula: str
    exact_zeros: bool
    source: str
    factory: Callable[[], nn.Module]


ACTIVATIONS: dict[str, ActivationSpec] = {
    spec.name: spec
    for spec in (
        ActivationSpec(
            name="relu",
            label="ReLU",
            gated=False,
            formula=r"\mathrm{ReLU}(z) = \max(0, z)",
            exact_zeros=True,
            source="Vaswani et al. 2017, eq. 2",
            factory=nn.ReLU,
        ),
        ActivationSpec(
            name="gelu",
            label="GELU (erf)",
            gated=False,
            formula=(
                r"\mathrm{GELU}(z) = z\,\Phi(z) = "
                r"\tfrac{z}{2}\left(1 + \mathrm{erf}(z/\sqrt{2})\right)"
            ),
            exact_zeros=False,
            source="Hendrycks & Gimpel 2016; BERT (Devlin et al. 2019)",
            factory=lambda: nn.GELU(approximate="none"),
        ),
        ActivationSpec(
            name="gelu_tanh",
            label="GELU (tanh)",
            gated=False,
            formula=(
                r"\mathrm{GELU}(z) \approx \tfrac{z}{2}\left(1 + "
                r"\tanh\left(\sqrt{2/\pi}\,(z + 0.044715 z^3)\right)\right)"
            ),
            exact_zeros=False,
            source="Hendrycks & Gimpel 2016; GPT-2 (Radford et al. 2019)",
            factory=lambda: nn.GELU(approximate="tanh"),
        ),
        ActivationSpec(
            name="silu",
            label="SiLU (Swish)",
            gated=False,
            formula=r"\mathrm{SiLU}(z) = z\,\sigma(z) = \frac{z}{1 + e^{-z}}",
            exact_zeros=False,
            source="Elfwing et al. 2017; Ramachandran et al. 2017",
            factory=nn.SiLU,
        ),
        ActivationSpec(
            name="swiglu",
            label="SwiGLU",
            gated=True,
            formula=(
                r"\mathrm{SwiGLU}(x) = \mathrm{SiLU}(x W_{gate} + b_{gate}) \odot (x W_1 + b_1)"
            ),
            exact_zeros=False,
            source="Shazeer 2020; LLaMA (Touvron et al. 2023)",
            factory=nn.SiLU,
        ),
        ActivationSpec(
            name="geglu",
            label="GeGLU",
            gated=True,
            formula=r"\mathrm{GeGLU}(x) = \mathrm{GELU}(x W_{gate} + b_{gate}) \odot (x W_1 + b_1)",
            exact_zeros=False,
            source="Shazeer 2020",
            factory=lambda: nn.GELU(approximate="none"),
        ),
        ActivationSpec(
            name="geglu_tanh",
            label="GeGLU (tanh)",
            gated=True,
            formula=(
                r"\mathrm{GeGLU_{tanh}}(x) = \mathrm{GELU_{tanh}}(x W_{gate} + b_{gate}) \odot "
                r"(x W_1 + b_1)"
            ),
            exact_zeros=False,
            source="Shazeer 2020; T5 v1.1 / Flan-T5 gated-gelu (gelu_new)",
            factory=lambda: nn.GELU(approximate="tanh"),
        ),
    )
}


def get_activation(name: str) -> ActivationSpec:
    """Look up an activation by its registry key.

    Raises:
        ValueError: for an unknown name; the message lists the supported names.
    """
    try:
        return ACTIVATIONS[name]
    except KeyError:
        supported = ", ".join(ACTIVATIONS)
        raise ValueError(f"unknown activation {name!r}; supported: {supported}") from None
