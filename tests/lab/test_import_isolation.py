"""`from app import lab` loads no web framework: the experiments layer knows nothing of HTTP.

The import contracts (`lint-imports`, [tool.importlinter] in pyproject.toml) check the
project's own imports; this runs the import in a fresh interpreter and looks at every module
loaded, so a third-party package that pulls in Starlette fails too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = (
    "import json, sys\n"
    "import app.lab\n"
    "print(json.dumps(sorted(m for m in sys.modules "
    "if m.split('.')[0] in ('fastapi', 'starlette'))))\n"
)


def test_import_app_lab_loads_no_fastapi_or_starlette() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], f"import app.lab loaded {loaded[:5]} ({len(loaded)} modules)"
