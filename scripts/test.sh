#!/usr/bin/env bash
# Set up (first run) and run every check: ruff lint + format, mypy, then the whole pytest
# suite, browser tests in Debian's Chromium included. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "== ruff"; .venv/bin/python -m ruff check . && .venv/bin/python -m ruff format --check .
echo "== mypy"; .venv/bin/python -m mypy
echo "== pytest"; .venv/bin/python -m pytest "$@"
