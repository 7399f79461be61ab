"""Dependencies run one way: kernel ← services runtime ← synthesis ← orchestrator ← trainer ← the application.

Every module of the three packages is imported (a broken one fails here, it is never skipped),
and every import statement in them, at module level or inside a function, is checked against
the layer map: a module may import its own layer or the layers below, never one above.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compoworld", "orchestrator", "trainer")

# module prefix -> layer; the longest matching prefix decides
LAYERS: dict[str, int] = {
    "compoworld": 0,  # the kernel: contracts, errors, settings, seeding, words, values, llm, manifest
    "compoworld.specs": 1,  # specifications and their ingesters
    "compoworld.runtime": 2,  # what every service runs on
    "compoworld.synth": 3,  # spec -> service, verified on the runtime
    "compoworld.starter": 3,
    "compoworld.deploy": 3,
    "orchestrator": 4,
    "trainer": 5,
    "compoworld.cli": 6,  # the application: may import everything
    "compoworld.deploy.entrypoint": 6,  # the image's lean application: serve | orchestrator
}
NAMES = {0: "kernel", 1: "specs", 2: "runtime", 3: "synthesis/deploy", 4: "orchestrator", 5: "trainer"}


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def modules() -> list[str]:
    found: list[str] = []
    for package in PACKAGES:
        found.append(package)
        path = [str(ROOT / package)]
        found += [m.name for m in pkgutil.walk_packages(path, prefix=package + ".")]
    return sorted(found)


def source(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


#: a registry's lazy target (``"orchestrator.agents.oracle:OracleAgent"``): an import made on first use
LAZY_TARGET = re.compile(r"((?:compoworld|orchestrator|trainer)(?:\.\w+)*):[A-Za-z_][\w.]*")


def imported(module: str) -> list[tuple[int, str]]:
    """(line, module) of every import of our packages in ``module``, wherever it stands.

    Lazy ``"package.module:attr"`` strings count as imports: a registry imports them on first use.
    """
    tree = ast.parse(source(module).read_text(encoding="utf-8"))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            lazy = LAZY_TARGET.fullmatch(node.value)
            if lazy:
                out.append((node.lineno, lazy.group(1)))
    return [(line, name) for line, name in out if name.split(".")[0] in PACKAGES]


ALL = modules()


def test_the_layer_map_covers_the_packages() -> None:
    assert len(ALL) > 100 and "compoworld.contracts" in ALL and "compoworld.cli" in ALL


def test_lazy_registry_targets_count_as_imports() -> None:
    lazy = [target for m in ALL for _, target in imported(m) if m == "orchestrator.agents"]
    assert "orchestrator.agents.oracle" in lazy  # registered as a string, imported on first use


@pytest.mark.parametrize("module", ALL)
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_no_import_runs_upward() -> None:
    upward = [
        f"{source(m).relative_to(ROOT)}:{line}: {m} ({NAMES.get(layer(m), layer(m))}) imports "
        f"{target} ({NAMES.get(layer(target), layer(target))})"
        for m in ALL
        for line, target in imported(m)
        if layer(target) > layer(m)
    ]
    assert upward == []


def test_no_module_hides_a_failed_import() -> None:
    """``except ImportError`` may only turn a missing optional dependency into a clear error (re-raise)."""
    hiding: list[str] = []
    for m in ALL:
        tree = ast.parse(source(m).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            names = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
            if names & {"ImportError", "ModuleNotFoundError"} and not any(
                isinstance(s, ast.Raise) for s in ast.walk(node)
            ):
                hiding.append(f"{source(m).relative_to(ROOT)}:{node.lineno}")
    assert hiding == []
