"""No import of our own packages sits under ``except ImportError``: a broken module fails loudly.

Optional third-party packages (transformers, tokenizers) may be guarded; compoworld,
orchestrator and trainer are never optional, so catching their ImportError could only turn a
bug into a misleading "not available".
"""

from __future__ import annotations

import ast

from tests.package_sources import PACKAGES, ROOT, package_sources


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(
        isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception") for n in names
    )


def guarded_own_imports(tree: ast.AST) -> list[int]:
    lines: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not any(_catches_import_error(h) for h in node.handlers):
            continue
        for stmt in node.body:
            for inner in ast.walk(stmt):
                if (isinstance(inner, ast.ImportFrom) and (inner.module or "").split(".")[0] in PACKAGES) or (
                    isinstance(inner, ast.Import)
                    and any(a.name.split(".")[0] in PACKAGES for a in inner.names)
                ):
                    lines.append(inner.lineno)
    return lines


def test_no_own_import_is_guarded_by_an_import_error_handler() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in package_sources()
        for line in guarded_own_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_check_sees_a_guarded_own_import_and_spares_a_third_party_one() -> None:
    code = (
        "try:\n    from orchestrator.tasks import x\nexcept ImportError:\n    x = None\n"
        "try:\n    import transformers\nexcept ImportError:\n    transformers = None\n"
    )
    assert guarded_own_imports(ast.parse(code)) == [2]
