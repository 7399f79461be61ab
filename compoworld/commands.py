"""How a package contributes a group of sub-commands to ``compoworld``: a factory, not a shared app.

A module-level ``typer.Typer`` is mutable state every ``cli_app()`` would share; a group is
instead a zero-argument function marked ``@command_group`` that builds a fresh Typer app each
call, and ``compoworld/cli.py`` calls it once per ``cli_app()``.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

__all__ = ["command_group", "is_command_group"]

_MARK = "__compoworld_command_group__"


def command_group(factory: Callable[[], typer.Typer]) -> Callable[[], typer.Typer]:
    """Mark ``factory`` as building a fresh Typer group each call."""
    setattr(factory, _MARK, True)
    return factory


def is_command_group(value: object) -> bool:
    """Whether ``value`` is a factory marked with ``@command_group``."""
    return callable(value) and getattr(value, _MARK, False) is True
