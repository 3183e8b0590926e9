"""Figures that travel: one plotly renderer for JupyterLab, VS Code, Colab and exported HTML.

`lab.notebook()` (once, in the first cell) makes every `fig.show()` of the notebook emit:

- `application/vnd.plotly.v1+json`: the figure, which JupyterLab and VS Code draw themselves;
- `text/html`: a div drawn by `Plotly.newPlot`, which `jupyter nbconvert --to html` keeps. The
  plotly.js it needs (the copy inside the plotly package, ~4.8 MB) is written into the
  notebook once, by the first figure shown (as plotly's `init_notebook_mode(connected=False)`
  does), never per figure and never from a CDN;
- `image/png` (optional, `png=True` or when kaleido is installed): a picture of the figure
  for viewers that run no JavaScript (GitHub, print), drawn by kaleido with a Chromium
  (Debian's `/usr/bin/chromium` unless `BROWSER_PATH` names another).

In Google Colab each output is its own frame, so a script written once cannot reach the
next cell: there `lab.notebook()` picks plotly's "colab" renderer (plotly.js from its CDN;
Colab is online anyway).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import sys
import uuid
import warnings
from typing import Any

import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer
from plotly.offline import get_plotlyjs

from app.lab.figures.parts import PLOT_CONFIG

RENDERER = "ffn_lab"
"""The name `lab.notebook()` registers in `plotly.io.renderers`."""

DEBIAN_CHROMIUM = "/usr/bin/chromium"


def chromium_path() -> str | None:
    """The Chromium kaleido drives: `BROWSER_PATH`, else Debian's, else one on PATH."""
    named = os.environ.get("BROWSER_PATH")
    if named:
        return named
    if os.path.exists(DEBIAN_CHROMIUM):
        return DEBIAN_CHROMIUM
    return shutil.which("chromium") or shutil.which("google-chrome")


def can_draw_png() -> bool:
    """True when kaleido is installed and a Chromium is found for it."""
    return importlib.util.find_spec("kaleido") is not None and chromium_path() is not None


_server = {"running": False}


def image(fig: Any, format: str = "png", scale: float = 2.0) -> bytes:
    """The figure as PNG or SVG bytes, drawn by kaleido in Chromium (`chromium_path`).

    One Chromium is started on the first call and reused (kaleido's sync server), so a
    notebook's later pictures take a fraction of a second.

    Raises:
        RuntimeError: kaleido is not installed or no Chromium was found (the message says
            what to install).
    """
    if importlib.util.find_spec("kaleido") is None:
        raise RuntimeError(
            "PNG and SVG need kaleido: pip install -e '.[notebook]' (or pip install kaleido)"
        )
    browser = chromium_path()
    if browser is None:
        raise RuntimeError(
            "kaleido needs a Chromium: apt-get install chromium, or set BROWSER_PATH"
        )
    os.environ.setdefault("BROWSER_PATH", browser)
    try:
        return _draw(fig, format, scale)
    except Exception as exc:
        # kaleido 1.x may read its page's JavaScript context before the page has loaded on
        # a busy machine ("kaleido_scopes is not defined"): a fresh Chromium, once
        if "kaleido_scopes is not defined" not in str(exc):
            raise
        import kaleido

        kaleido.stop_sync_server(silence_warnings=True)
        _server["running"] = False
        return _draw(fig, format, scale)


def _draw(fig: Any, format: str, scale: float) -> bytes:
    """One picture by kaleido's sync server, started on the first call."""
    if not _server["running"]:
        import kaleido

        kaleido.start_sync_server(silence_warnings=True)
        if not _server.get("stops"):
            atexit.register(kaleido.stop_sync_server, silence_warnings=True)
            _server["stops"] = True
        _server["running"] = True
    with warnings.catch_warnings():  # plotly passes options the running server ignores
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        data: bytes = pio.to_image(fig, format=format, scale=scale)
    return data


def write_image(fig: Any, path: str | os.PathLike[str], scale: float = 2.0) -> None:
    """Save the figure as PNG or SVG (by the file's suffix), as `image` draws it."""
    target = os.fspath(path)
    suffix = target.rsplit(".", 1)[-1].lower()
    if suffix not in {"png", "svg"}:
        raise ValueError(f"{target!r}: write a .png or an .svg file")
    with open(target, "wb") as out:
        out.write(image(fig, suffix, scale))


class TravellingRenderer(MimetypeRenderer):  # type: ignore[misc]
    """plotly's figure JSON for JupyterLab and VS Code, a self-drawing div for exported HTML
    (plotly.js inlined by the first figure only) and, when `png`, a picture."""

    def __init__(self, png: bool = False) -> None:
        self.png = png
        # plotly copies a renderer for each figure (shallowly): this dict is shared
        self.written = {"plotly.js": False}

    def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
        from plotly.utils import PlotlyJSONEncoder

        figure = json.loads(json.dumps(fig_dict, cls=PlotlyJSONEncoder))
        bundle: dict[str, Any] = {"application/vnd.plotly.v1+json": {"config": PLOT_CONFIG}}
        bundle["application/vnd.plotly.v1+json"] |= figure
        div = f"ffn-lab-{uuid.uuid4().hex}"
        height = int(figure.get("layout", {}).get("height") or 380)
        script = (
            f"Plotly.newPlot({json.dumps(div)}, {json.dumps(figure.get('data', []))}, "
            f"{json.dumps(figure.get('layout', {}))}, {json.dumps(PLOT_CONFIG)});"
        )
        head = ""
        if not self.written["plotly.js"]:
            head = f"<script>{get_plotlyjs()}</script>"
            self.written["plotly.js"] = True
        bundle["text/html"] = (
            f'{head}<div id="{div}" class="ffn-lab-figure" style="height:{height}px;'
            f'width:100%"></div><script>{script}</script>'
        )
        if self.png and can_draw_png():
            import base64

            from plotly.graph_objects import Figure

            picture = image(Figure(fig_dict), "png", scale=1.0)
            bundle["image/png"] = base64.b64encode(picture).decode("ascii")
        return bundle


def in_colab() -> bool:
    return "google.colab" in sys.modules


def notebook(png: bool | None = None) -> None:
    """Make every figure of this notebook travel (see this module's docstring).

    Args:
        png: also attach a PNG of each figure; None: when kaleido and a Chromium are found.

    The renderer becomes plotly's default (`plotly.io.renderers.default`): "ffn_lab", or
    "colab" in Google Colab. Returns nothing, so the cell that calls it prints nothing.
    """
    if in_colab():
        pio.renderers.default = "colab"
        return
    pio.renderers[RENDERER] = TravellingRenderer(png=can_draw_png() if png is None else png)
    pio.renderers.default = RENDERER
