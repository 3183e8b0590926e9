"""Helpers shared by the classroom browser tests (not a test module)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# README's screenshots are rewritten only on request (FFN_LAB_UPDATE_SCREENSHOTS=1), so a
# test run leaves the working tree clean; otherwise they go to test-artifacts/.
DOCS = ROOT / ("docs" if os.environ.get("FFN_LAB_UPDATE_SCREENSHOTS") == "1" else "test-artifacts")
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# A page query over the parameter limit, and the values its refusal (too_many_params) prints:
# SwiGLU 4096 -> 16384 without biases is 3 x 4096 x 16384 parameters; the default limit is 150 M.
OVER_LIMIT = "d_model=4096&d_ff=16384&activation=swiglu&bias=0"
OVER_LIMIT_PARAMS: dict[str, Any] = {
    "d_model": 4096,
    "d_ff": 16384,
    "activation": "swiglu",
    "params": "201,326,592",
    "limit": "150,000,000",
}


def catalog(lang: str) -> dict[str, str]:
    """Every message of `lang`, merged from static/i18n/<lang>/*.json."""
    out: dict[str, str] = {}
    for f in sorted((ROOT / "static" / "i18n" / lang).glob("*.json")):
        out |= json.loads(f.read_text(encoding="utf-8"))
    return out


def fill(template: str, **params: Any) -> str:
    """A catalog message with its {name} placeholders replaced by `params`."""
    for name, value in params.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def wait_answers(page: Any, timeout: float = 30_000) -> None:
    """Like conftest's wait_rendered, for pages where the first plot may be hidden (embed)."""
    page.locator("body[data-forward-seq]").wait_for(state="attached", timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('section[aria-busy=\"true\"]')", timeout=timeout
    )
    page.locator(
        "main > section:visible .js-plotly-plot .main-svg, #readout:visible"
    ).first.wait_for(timeout=timeout)
