"""Where the static files and templates are, in a checkout or an installed package.

Resolved from this file, never from the working directory or from user input.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_HERE / name, _HERE.parent / name):  # installed, then checkout
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name}/ folder next to the app package")


STATIC_DIR = _find("static")
TEMPLATES_DIR = _find("templates")
