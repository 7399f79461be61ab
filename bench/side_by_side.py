"""Two paths of one bench, each run in a fresh process (so peak RSS is its own), printed side by side."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

__all__ = ["run_paths"]


def run_paths(
    script: str, args: list[str], paths: dict[str, str], width: int, same: str
) -> dict[str, dict[str, Any]]:
    """Run ``script args --path P`` for each path (its last stdout line is its figures' JSON), print
    the figures in a column per path (``paths`` maps each to its heading) and whether the outputs'
    ``sha256`` agree (``same`` names the output); return the figures by path."""
    runs: dict[str, dict[str, Any]] = {}
    for path in paths:
        out = subprocess.run(
            [sys.executable, script, *args, "--path", path], check=True, capture_output=True, text=True
        ).stdout
        runs[path] = json.loads(out.strip().splitlines()[-1])
    first, second = list(paths)
    print(f"{'':>{width}} {paths[first]:>20} {paths[second]:>24}")
    for key in runs[first]:
        print(f"{key:>{width}} {runs[first][key]!s:>20} {runs[second][key]!s:>24}")
    print(f"\nbyte-identical {same}: {runs[first]['sha256'] == runs[second]['sha256']}")
    return runs
