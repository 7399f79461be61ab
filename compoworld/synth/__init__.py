"""Synthesis: a ServiceSpec becomes a stateful tool service folder (entities, bound tools, seed, code).

    ingest (compoworld.specs) -> infer_entities -> classify_tools -> seed_rows -> render -> verify

Names are resolved lazily so that importing a small helper (``compoworld.synth.naming``) does not
pull in Jinja, rich or the runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "BuildReport",
    "EntityInference",
    "ServiceBuildResult",
    "Synthesis",
    "build_library",
    "build_service",
    "check_rendered",
    "classify_tools",
    "infer_entities",
    "render_files",
    "seed_rows",
    "synthesize",
]

_EXPORTS = {
    "BuildReport": "compoworld.synth.build",
    "ServiceBuildResult": "compoworld.synth.build",
    "build_library": "compoworld.synth.build",
    "build_service": "compoworld.synth.build",
    "check_rendered": "compoworld.synth.build",
    "classify_tools": "compoworld.synth.classify",
    "EntityInference": "compoworld.synth.entities",
    "infer_entities": "compoworld.synth.entities",
    "render_files": "compoworld.synth.render",
    "seed_rows": "compoworld.synth.seed",
    "Synthesis": "compoworld.synth.pipeline",
    "synthesize": "compoworld.synth.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compoworld.synth' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
