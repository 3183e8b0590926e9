#!/usr/bin/env bash
# Set up (first run) and start FFN Lab on http://127.0.0.1:8000. Extra flags go to ffn-lab,
# e.g. bash scripts/serve.sh --host 0.0.0.0 --port 8080
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/ffn-lab "$@"
