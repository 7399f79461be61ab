"""One service built from an OpenAPI document written inline in a test (real synthesis, real files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.synth.build import build_service

__all__ = ["build_inline"]


def build_inline(root: Path, name: str, doc: dict[str, Any], *, verify: bool = True) -> Path:
    """Write ``doc`` as ``root/<name>.json``, build it into ``root/lib`` and return the service folder."""
    spec = root / f"{name}.json"
    spec.write_text(json.dumps(doc))
    return Path(build_service(spec, root / "lib", verify=verify).folder)
