"""Text that fits a figure drawn later at a width known only roughly (a handout's picture, a
notebook's output): the width of a text, titles wrapped to a width, whole-number ticks for
index axes, and the numbers a small heatmap prints in its cells.

The same rules as the page's static/js/fit.js and static/js/charts/heatmap.js, with the
shared numbers (the tick steps, the sizes at which a heatmap prints its numbers) in
static/js/charts/rules.json. Python has no canvas to measure text with: widths are
estimated as fit.js does without one, a little wide, so that what is said to fit does.
"""

from __future__ import annotations

import math
import re
from typing import Any

from app.lab.figures.rules import RULES

TICK_STEPS: list[int] = RULES["tick_steps"]
"""Steps between index ticks (1, 2, 5, 10, ...), as fit.js `integerDtick`."""
CELL_NUMBERS: dict[str, Any] = RULES["cell_numbers"]
"""When a heatmap prints its numbers: `hand_size` (d_model and d_ff at most this), the
significant digits tried in turn (`digits`), the room a cell keeps beside its number (`pad`)."""

_WIDE = re.compile(
    r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
)
# Break after spaces and before a CJK character, never before closing punctuation.
_BREAK = re.compile(
    r"(?<=\s)|(?<![（【「『])(?=[\u2e80-\u9fff\uff00-\uff60])(?![）】」』，。、；：！？])"
)


def text_width(text: str, size: float) -> float:
    """The width in px of `text` at font size `size` px: 1 em for a CJK or full-width
    character, 0.3 for a space, 0.7 for a capital, 0.62 for the rest (fit.js `textWidth`
    without a canvas; a little wider than DejaVu Sans and most system fonts)."""
    em = 0.0
    for ch in text:
        em += 1 if _WIDE.match(ch) else 0.3 if ch == " " else 0.7 if ch.isupper() else 0.62
    return em * size


def wrap(text: str, width: float, size: float) -> list[str]:
    """`text` in lines no wider than `width` px at `size` px, broken after spaces and before
    CJK characters; a word wider than `width` is broken between its characters. Never cut."""
    words = [w for w in _BREAK.split(text) if w]
    lines: list[str] = []
    line = ""
    for word in words:
        if not line or text_width((line + word).rstrip(), size) <= width:
            line += word
            continue
        lines.append(line.rstrip())
        line = word
    if line.strip():
        lines.append(line.rstrip())
    out: list[str] = []
    for line in lines:  # a single word wider than the room: broken between its characters
        while text_width(line, size) > width and len(line) > 1:
            cut = len(line) - 1
            while cut > 1 and text_width(line[:cut], size) > width:
                cut -= 1
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out or [""]


def wrapped(text: str, width: float, size: float) -> list[str]:
    """`wrap`ped lines as Plotly text: a "<" that starts no tag ("|h| < 0.01") written as
    "&lt;", so that Plotly does not read the rest of the line as a tag."""
    return [re.sub(r"<(?![A-Za-z/])", "&lt;", line) for line in wrap(text, width, size)]


def unwrapped(text: str) -> str:
    """The text `wrapped` lines were made of (lines joined by "<br>"): a space between
    lines, none after a CJK character."""
    lines = text.replace("&lt;", "<").split("<br>")
    out = lines[0]
    for line in lines[1:]:
        out += ("" if out and _WIDE.match(out[-1]) else " ") + line
    return out


def integer_dtick(count: int, n: int) -> int:
    """The tick step of an index axis of `count` cells with room for about `n` labels: the
    first of TICK_STEPS at least count / n (fit.js `integerDtick`): whole numbers only."""
    raw = max(1, math.ceil(count / max(1, n)))
    return next((step for step in TICK_STEPS if step >= raw), raw)


def index_ticks(count: int, length: float, size: float, first: int = 0) -> dict[str, Any]:
    """Plotly axis fields for an index axis (tokens, units, features, layers) of `count`
    cells from index `first`, drawn `length` px long: ticks on whole numbers only, as many
    as fit (a label is as wide as the last index and one and a half em beside it)."""
    label = text_width(str(first + max(0, count - 1)), size) + size * 1.5
    return {"tickmode": "linear", "tick0": 0, "dtick": integer_dtick(count, int(length // label))}


def signed_digits(value: float, digits: int) -> str:
    """A signed number with at most `digits` significant digits: "+1.5", "-0.3441", "0"
    (static/js/format.js `signedDigits` with the browser's English format)."""
    if value == 0:
        return "0"
    a = abs(value)
    sign = "-" if value < 0 else "+"
    if a < 1e-3 or a >= 1e6:
        mantissa, exponent = f"{a:.{min(2, digits - 1)}e}".split("e")
        return f"{sign}{mantissa}e{int(exponent):+d}"
    rounded = float(f"{a:.{digits}g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(rounded)))
    text = f"{rounded:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return sign + text


def cell_numbers(
    z: Any, cell_w: float, cell_h: float, size: float
) -> tuple[list[list[str]], int] | None:
    """The numbers a heatmap prints in its cells [rows][cols], at `size` px: four
    significant digits, else fewer (CELL_NUMBERS `digits`) when those do not fit the cells
    `cell_w` x `cell_h` px wide and high; None when even the shortest do not (numbers that run
    together cannot be read: the hover text has every value). Returns (text, digits)."""
    rows = [[float(v) for v in row] for row in z]
    if not rows or cell_h < size * 1.25:
        return None
    for digits in CELL_NUMBERS["digits"]:
        text = [[signed_digits(v, digits) for v in row] for row in rows]
        widest = max((text_width(s, size) for row in text for s in row), default=0.0)
        if widest <= cell_w - CELL_NUMBERS["pad"]:
            return text, digits
    return None
