"""The source file of every module of the three packages (for the AST checks)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compoworld", "orchestrator", "trainer")


def package_sources() -> list[Path]:
    found: list[Path] = []
    for package in PACKAGES:
        found.append(ROOT / package / "__init__.py")
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=package + "."):
            path = ROOT.joinpath(*info.name.split("."))
            found.append(path / "__init__.py" if info.ispkg else path.with_suffix(".py"))
    return found
