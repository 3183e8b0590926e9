"""The chart rules the page imports too (static/js/charts/rules.json): one file, one truth."""

from __future__ import annotations

import json
from typing import Any

from app.paths import STATIC_DIR

RULES_FILE = STATIC_DIR / "js" / "charts" / "rules.json"
RULES: dict[str, Any] = json.loads(RULES_FILE.read_text(encoding="utf-8"))
