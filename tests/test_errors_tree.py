"""The exception tree drawn in ``compoworld/errors.py`` is the tree the code defines."""

from __future__ import annotations

import importlib
import re

import compoworld.errors
from compoworld.errors import CompoWorldError
from tests.test_layers import ALL, PACKAGES

LINE = re.compile(
    r"^(?P<indent>(?:[│ ] {3}|[├└]── )*)(?P<name>[A-Z]\w+)(?: \((?P<also>[\w, ]+)\))?\s+(?P<where>(?:compoworld|orchestrator|trainer)[\w.]*)(?:\s|$)"
)


def drawing() -> tuple[dict[str, tuple[str | None, set[str], str]], dict[str, tuple[set[str], str]]]:
    """The tree (name -> parent, builtin bases, module) and the signals (name -> bases, module)."""
    doc = compoworld.errors.__doc__ or ""
    tree_part, _, signal_part = doc.partition("Signals:")
    tree: dict[str, tuple[str | None, set[str], str]] = {}
    stack: list[str] = []
    for raw in tree_part.splitlines():
        m = LINE.match(raw)
        if m is None:
            continue
        depth = len(m["indent"]) // 4
        stack[depth:] = [m["name"]]
        also = {a.strip() for a in (m["also"] or "").split(",") if a.strip()}
        tree[m["name"]] = (stack[depth - 1] if depth else None, also, m["where"])
    signals: dict[str, tuple[set[str], str]] = {}
    for raw in signal_part.splitlines():
        m = LINE.match(raw)
        if m is not None and not m["indent"]:
            signals[m["name"]] = ({a.strip() for a in (m["also"] or "").split(",") if a.strip()}, m["where"])
    return tree, signals


def ours() -> list[type[BaseException]]:
    """Every public exception class our packages define (all modules imported first)."""
    for module in ALL:
        importlib.import_module(module)
    seen: list[type[BaseException]] = []
    todo: list[type[BaseException]] = [Exception]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                todo.append(sub)
                if sub.__module__.split(".")[0] in PACKAGES and not sub.__name__.startswith("_"):
                    seen.append(sub)
    return seen


def builtin_bases(cls: type[BaseException]) -> set[str]:
    return {b.__name__ for b in cls.__bases__ if b.__module__ == "builtins" and b is not Exception}


def test_the_drawing_parses_into_a_tree_rooted_at_compoworld_error() -> None:
    tree, signals = drawing()
    assert tree["CompoWorldError"][0] is None and len(tree) > 15
    assert tree["K8sTimeoutError"][0] == "K8sError" and tree["EpisodeBusy"][0] == "EpisodeError"
    assert "ToolFailure" in signals


def test_every_drawn_class_exists_where_the_drawing_says_with_that_parent() -> None:
    tree, signals = drawing()
    for name, (parent, also, where) in tree.items():
        cls = getattr(importlib.import_module(where), name)
        assert cls.__module__ == where, f"{name} is defined in {cls.__module__}, drawn in {where}"
        ours_bases = [b.__name__ for b in cls.__bases__ if issubclass(b, CompoWorldError)]
        assert ours_bases == ([parent] if parent else []), f"{name}: drawn under {parent}, is {ours_bases}"
        assert builtin_bases(cls) == also, f"{name}: drawn also as {also}, is {builtin_bases(cls)}"
    for name, (also, where) in signals.items():
        cls = getattr(importlib.import_module(where), name)
        assert not issubclass(cls, CompoWorldError) and builtin_bases(cls) == also, name


def test_every_exception_class_of_the_packages_is_drawn_once() -> None:
    tree, signals = drawing()
    classes = ours()
    names = [c.__name__ for c in classes]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []  # e.g. one LibraryError, not two
    undrawn = sorted(f"{c.__module__}.{c.__name__}" for c in classes if c.__name__ not in {*tree, *signals})
    assert undrawn == []
