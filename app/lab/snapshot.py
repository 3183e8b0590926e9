"""A standalone HTML snapshot of the current views, rendered by plotly.io with Plotly inlined.

The file needs no server and no network: it opens from a USB stick or inside a slide. Titles
and labels come from the same message catalogs as the page (static/i18n/<lang>/*.json).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import plotly.io as pio
from jinja2 import Environment, FileSystemLoader, select_autoescape

import app as app_package
from app.lab.figures.panels import PLOT_CONFIG, Messages, figures
from app.paths import TEMPLATES_DIR

templates = Environment(loader=FileSystemLoader(TEMPLATES_DIR), autoescape=select_autoescape())


def formula_key(*, gated: bool, bias: bool) -> str:
    """The message of the FFN's formula as it ran: plain or gated, with or without biases."""
    return "app.formula" + ("_gated" if gated else "") + ("" if bias else "_nobias")


def render_snapshot(forward: dict[str, Any], perturb: dict[str, Any], lang: str) -> str:
    """The whole HTML document: Plotly inlined once, then one div per figure.

    Args:
        forward: the dict `lab.ffn.forward` returns (NumPy arrays inside).
        perturb: the dict `lab.ffn.perturb` returns for the same configuration.
        lang: "en" or "zh-CN", the language of titles and labels.
    """
    msg = Messages(lang)
    divs = []
    for i, (name, fig) in enumerate(figures(forward, perturb, msg)):
        divs.append(
            pio.to_html(
                fig,
                full_html=False,
                include_plotlyjs=i == 0,
                config=PLOT_CONFIG,
                div_id=f"plot-{name}",
                validate=False,
            )
        )
    config = forward["config"]
    max_other = float(perturb["max_abs_change_other_positions"])
    context = {
        "lang": lang,
        "title": msg(
            "snapshot.title",
            d_model=config["d_model"],
            d_ff=config["d_ff"],
            activation=config["activation"],
        ),
        "heading": msg("app.title"),
        "formula": msg(formula_key(gated=bool(config["gated"]), bias=bool(config["bias"]))),
        "shapes": msg(
            "readout.shapes", t=config["num_tokens"], d_model=config["d_model"], d_ff=config["d_ff"]
        ),
        "params": msg("snapshot.params", params=f"{forward['params']['total']:,}"),
        # "changed ... by at most 0" reads as a change: say that nothing changed
        "perturb": msg("snapshot.perturb_exact", position=perturb["position"])
        if max_other == 0
        else msg("snapshot.perturb", position=perturb["position"], value=f"{max_other:.3g}"),
        "made": msg(
            "snapshot.made",
            version=app_package.__version__,
            when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        ),
        "divs": divs,
    }
    template = templates.get_template("snapshot.html")
    return template.render(**context)
