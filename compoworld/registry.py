"""One registry type for everything found by name: ingesters, criterion kinds, agents, archetypes, commands.

A ``Registry[T]`` maps names to values of one kind. A value is registered directly, or as a
lazy ``"package.module:attr"`` string imported on first use (so listing names never imports a
heavy module), or by an installed distribution through a Python entry point in the registry's
group (``[project.entry-points."compoworld.agents"] mine = "my_pkg.agent:MyAgent"``), so a
package outside this tree adds one without editing any list here. A name is taken once:
registering a second, different value under it raises ``RegistryError`` (the same value again
is a no-op, so re-importing a module that registers itself is harmless). ``check`` validates
each value when it is first resolved, so a string that points at the wrong thing fails with
the registry's name in the message instead of deep inside a caller.

    registry = Registry[type[Agent]]("agent", entry_points="compoworld.agents", check=is_agent)
    registry.register("oracle", "orchestrator.agents.oracle:OracleAgent")
    registry.get("oracle")        # imports the module, checks, caches
    registry.names()              # built-in and entry-point names, sorted
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from compoworld.errors import CompoWorldError

__all__ = ["Registry", "RegistryError", "load_target"]

T = TypeVar("T")


class RegistryError(CompoWorldError, LookupError):
    """An unknown name, a name registered twice, or a target that is not what the registry holds."""


_LAZY = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def load_target(target: str) -> object:
    """The object a ``"package.module:attr"`` string names (``attr`` may be dotted)."""
    if not _LAZY.fullmatch(target):
        raise RegistryError(f"a lazy target must look like 'package.module:attr', got {target!r}")
    module, _, attr = target.partition(":")
    value: object = importlib.import_module(module)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def _same(current: object, target: object) -> bool:
    """The same entry: equal, or a value and the lazy string that names it (a module registering itself)."""
    if current is target or current == target:
        return True
    lazy, value = (current, target) if isinstance(current, str) else (target, current)
    if not isinstance(lazy, str) or isinstance(value, str):
        return False
    if f"{getattr(value, '__module__', '')}:{getattr(value, '__qualname__', '')}" == lazy:
        return True  # e.g. a class decorated into the registry while its module is being imported
    module, _, attr = lazy.partition(":")
    found: object = sys.modules.get(module)  # only a module already imported: comparing never imports
    for part in attr.split("."):
        found = getattr(found, part, None)
    return found is value


class Registry(Generic[T]):
    """Names -> values of one kind; lazy strings and entry points resolved on first use."""

    def __init__(
        self,
        kind: str,
        *,
        entry_points: str | None = None,
        check: Callable[[object], T] | None = None,
    ) -> None:
        self.kind = kind
        self.group = entry_points
        self._check = check
        self._entries: dict[str, T | str] = {}
        self._plugins_loaded = entry_points is None

    def register(self, name: str, target: T | str) -> None:
        """Add ``name``; a different value under a taken name is refused."""
        if not name:
            raise RegistryError(f"a {self.kind} needs a non-empty name")
        if isinstance(target, str) and not _LAZY.fullmatch(target):
            raise RegistryError(f"a lazy {self.kind} must look like 'package.module:attr', got {target!r}")
        current = self._entries.get(name)
        if current is not None and not _same(current, target):
            raise RegistryError(f"a {self.kind} named {name!r} is already registered ({current!r})")
        if current is None or not isinstance(target, str):
            self._entries[name] = target

    def add(self, name: str) -> Callable[[T], T]:
        """Decorator form of ``register``."""

        def deco(value: T) -> T:
            self.register(name, value)
            return value

        return deco

    def get(self, name: str) -> T:
        """The value of ``name``, imported and checked on first use."""
        self._load_plugins()
        try:
            target = self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r} (known: {known})") from None
        if isinstance(target, str):
            try:
                loaded = load_target(target)
            except (ImportError, AttributeError) as exc:
                raise RegistryError(
                    f"{self.kind} {name!r} points at {target!r}, which cannot be loaded: {exc}"
                ) from exc
            value = self._checked(name, loaded)
            self._entries[name] = value
            return value
        return target

    def _checked(self, name: str, value: object) -> T:
        if self._check is None:
            return value  # type: ignore[return-value]
        try:
            return self._check(value)
        except (TypeError, ValueError) as exc:
            raise RegistryError(f"{self.kind} {name!r} is not usable: {exc}") from exc

    def _load_plugins(self) -> None:
        if self._plugins_loaded or self.group is None:
            return
        self._plugins_loaded = True
        for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
            self.register(ep.name, ep.value)

    def names(self) -> list[str]:
        self._load_plugins()
        return sorted(self._entries)

    def ordered(self) -> list[str]:
        """Every name in registration order (this tree's first, then entry points), for ordered uses."""
        self._load_plugins()
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """Every (name, value), resolving lazy ones."""
        return [(name, self.get(name)) for name in self.names()]

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._entries)
