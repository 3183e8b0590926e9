"""The chart rules live in static/js/charts/rules.json only: no script or figure keeps a copy."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.lab.figures import fit as figure_fit
from app.lab.figures import parts as figure_parts

ROOT = Path(__file__).resolve().parents[2]
RULES = json.loads((ROOT / "static" / "js" / "charts" / "rules.json").read_text("utf-8"))


def test_python_figures_use_the_rules_file() -> None:
    assert RULES["diverging"] == figure_parts.DIVERGING
    assert RULES["accent"] == figure_parts.ACCENT
    assert RULES["muted"] == figure_parts.MUTED
    assert RULES["window"] == figure_parts.WINDOW
    assert RULES["robust_quantile"] == figure_parts.ROBUST_QUANTILE
    assert figure_parts.robust_zmax.__defaults__ == (RULES["robust_quantile"],)
    assert RULES["tick_steps"] == figure_fit.TICK_STEPS
    assert RULES["cell_numbers"] == figure_fit.CELL_NUMBERS


def test_no_copy_of_the_rules_in_the_code() -> None:
    """A colour stop of the diverging scale, the window widths or the quantile written out
    again in a script or a Python figure module would drift from rules.json."""
    stops = [colour for _, colour in RULES["diverging"][1:-1]]
    files = [
        *(p for p in (ROOT / "static" / "js").rglob("*.js")),
        *(ROOT / "app" / "lab").rglob("figure*.py"),
    ]
    copies = []
    for path in files:
        text = path.read_text("utf-8")
        for needle in stops:
            if needle.lower() in text.lower():
                copies.append(f"{path.relative_to(ROOT)}: {needle}")
        if re.search(r"\bunits:\s*256\b|\bfeatures:\s*128\b|q\s*=\s*0\.99\b", text):
            copies.append(f"{path.relative_to(ROOT)}: window width or quantile")
    assert copies == []
