"""No function returns ``SomeResult | str`` with the string as a "why not" sentinel.

A caller of such a function must remember an ``isinstance(x, str)`` test, and forgetting it
passes a reason on as if it were the result. Functions return their result and raise a typed
error (``compoworld/errors.py``: the tree, or a signal caught one level up) instead.
"""

from __future__ import annotations

import ast

from tests.package_sources import ROOT, package_sources

#: values that are a string's honest alternative, not a result it stands in for
PLAIN = {"str", "None", "Path", "Any", "int", "float", "bool", "bytes"}


def _members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _members(node.left) + _members(node.right)
    return [node]


def sentinel_unions(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            names = [m.id for m in _members(node.returns) if isinstance(m, ast.Name)]
            if "str" in names and any(n not in PLAIN for n in names):
                out.append((node.lineno, node.name))
    return out


def test_no_function_returns_a_result_or_a_reason_string() -> None:
    found: list[str] = []
    for path in package_sources():
        for line, name in sentinel_unions(ast.parse(path.read_text(encoding="utf-8"))):
            found.append(f"{path.relative_to(ROOT)}:{line} {name}")
    assert found == []


def test_the_check_sees_a_sentinel_and_spares_an_optional_string() -> None:
    code = "def a() -> Task | str: ...\ndef b() -> str | None: ...\ndef c(p: Path | str) -> Path | str: ..."
    assert sentinel_unions(ast.parse(code)) == [(1, "a")]
