"""`lab.explore()`: the page's main sliders inside a notebook, computing in the kernel.

An anywidget (JupyterLab, VS Code, Colab: any front end with Jupyter widgets) holding
d_model, d_ff, T (tokens), the activation and the seed; each change runs `lab.forward` in
the kernel, and the widget draws the flow it answers, pre_activation [T, d_ff] -> hidden
[T, d_ff] -> output [T, d_model], as three heatmaps on the page's colour scale (ColorBrewer
RdBu, white at 0, a symmetric range per tensor). The drawing is a small canvas script in
static/js/notebook/explore.js: no plotly.js and nothing from a CDN.
"""

from __future__ import annotations

from typing import Any

from app.lab.figures.parts import DIVERGING
from app.model.activations import ACTIVATIONS
from app.paths import STATIC_DIR

ESM = STATIC_DIR / "js" / "notebook" / "explore.js"
SHOWN = ("pre_activation", "hidden", "output")
"""The tensors the widget draws, in the flow's order."""

D_MODELS = [4, 8, 16, 32, 64, 128, 256, 512]
D_FFS = [16, 32, 64, 128, 256, 512, 1024, 2048]
MAX_TOKENS = 32


def flow_data(
    d_model: int, d_ff: int, num_tokens: int, activation: str, seed: int
) -> dict[str, Any]:
    """What the widget draws: {tensor: {"z": rows, "shape": [T, n]}, "names": tensor_names,
    "error": None}, computed by `lab.forward` (display="full": every column)."""
    from app import lab

    r = lab.forward(
        d_model=d_model,
        d_ff=d_ff,
        num_tokens=num_tokens,
        activation=activation,
        seed=seed,
        display="full",
    )
    out: dict[str, Any] = {
        key: {"z": r[key].tolist(), "shape": list(r[key].shape)} for key in SHOWN
    }
    out["names"] = {key: r["tensor_names"][key] for key in SHOWN}
    out["colors"] = [color for _, color in DIVERGING]  # the page's diverging scale (rules.json)
    out["error"] = None
    return out


def explore(
    d_model: int = 16, d_ff: int = 64, num_tokens: int = 6, activation: str = "gelu", seed: int = 0
) -> Any:
    """A widget with the page's sliders (d_model, d_ff, T, activation, seed) drawing the flow.

    The arguments are where the sliders start (the /api/forward body's fields; d_model and
    d_ff snap to the page's steps).

    Args:
        d_model: width of a token.
        d_ff: hidden width.
        num_tokens: T, the number of tokens.
        activation: a key of `app.model.ACTIVATIONS`.
        seed: the weights' seed.

    Returns:
        An `anywidget.AnyWidget`; its `data` traitlet holds what is drawn (see `flow_data`),
        so `w.d_ff = 128` from Python redraws it too.

    Raises:
        RuntimeError: anywidget is not installed (pip install -e '.[notebook]').
    """
    try:
        import anywidget
        import traitlets
    except ImportError as error:  # pragma: no cover - the extra is not installed
        raise RuntimeError("lab.explore() needs anywidget: pip install -e '.[notebook]'") from error

    class Explorer(anywidget.AnyWidget):
        _esm = ESM
        d_model = traitlets.Int(16).tag(sync=True)
        d_ff = traitlets.Int(64).tag(sync=True)
        num_tokens = traitlets.Int(6).tag(sync=True)
        activation = traitlets.Unicode("gelu").tag(sync=True)
        seed = traitlets.Int(0).tag(sync=True)
        options = traitlets.Dict().tag(sync=True)
        data = traitlets.Dict().tag(sync=True)

        @traitlets.observe("d_model", "d_ff", "num_tokens", "activation", "seed")
        def _recompute(self, _change: Any = None) -> None:
            try:
                self.data = flow_data(
                    self.d_model, self.d_ff, self.num_tokens, self.activation, self.seed
                )
            except ValueError as error:  # a refused value: said where the flow is
                self.data = {"error": str(error)}

    widget = Explorer(
        d_model=d_model,
        d_ff=d_ff,
        num_tokens=num_tokens,
        activation=activation,
        seed=seed,
        options={
            "d_model": D_MODELS,
            "d_ff": D_FFS,
            "max_tokens": MAX_TOKENS,
            "activations": [{"name": s.name, "label": s.label} for s in ACTIVATIONS.values()],
        },
    )
    widget._recompute()
    return widget
