"""The ingester registry: source formats are data, found by name or by sniffing a document.

An ingester is a name, a ``detect(doc) -> bool`` and an ``ingest(doc, source_file)
-> ServiceSpec``. Each ingester module registers itself when imported (the
built-in ones are imported by ``compoworld.specs``), and an installed package adds
one through the ``compoworld.ingesters`` entry-point group (``compoworld.registry``),
so adding a format never means editing a central list. A name is taken once. Detection asks ingesters in ``priority`` order
(lower first, then by name) and takes the first that claims the document.
A caller that wants its own set passes an ``IngesterRegistry`` explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from compoworld.registry import Registry, RegistryError
from compoworld.specs.model import ServiceSpec

__all__ = ["INGESTERS", "Ingester", "IngesterRegistry", "register"]


@dataclass(frozen=True)
class Ingester:
    """One source format."""

    name: str
    detect: Callable[[Any], bool]
    ingest: Callable[[Any, str], ServiceSpec]
    priority: int = 50


def _is_ingester(value: object) -> Ingester:
    if not isinstance(value, Ingester):
        raise TypeError(f"{value!r} is not an Ingester")
    return value


class IngesterRegistry:
    """Ingesters by name (a ``Registry[Ingester]``), asked in priority order when sniffing a document."""

    def __init__(self, ingesters: tuple[Ingester, ...] = (), *, entry_points: str | None = None) -> None:
        self._registry: Registry[Ingester] = Registry(
            "ingester", entry_points=entry_points, check=_is_ingester
        )
        for ingester in ingesters:
            self.register(ingester)

    def register(self, ingester: Ingester) -> Ingester:
        """Add ``ingester`` under its name; a different ingester under a taken name is refused."""
        self._registry.register(ingester.name, ingester)
        return ingester

    def get(self, name: str) -> Ingester:
        """The ingester called ``name``; ``RegistryError`` naming the known ones otherwise."""
        ingester = self._registry.get(name)
        if ingester.name != name:
            raise RegistryError(f"ingester entry point {name!r} names an ingester called {ingester.name!r}")
        return ingester

    def names(self) -> list[str]:
        """Registered names, in detection order."""
        return [i.name for i in self]

    def detect(self, doc: Any) -> Ingester | None:
        """The first ingester (in priority order) whose ``detect`` claims ``doc``."""
        for ingester in self:
            if ingester.detect(doc):
                return ingester
        return None

    def __iter__(self) -> Iterator[Ingester]:
        found = [self.get(name) for name in self._registry.names()]
        return iter(sorted(found, key=lambda i: (i.priority, i.name)))

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def __len__(self) -> int:
        return len(self._registry)


#: The default registry: the built-in formats register themselves on import; an installed package
#: adds one with an entry point in the ``compoworld.ingesters`` group naming an ``Ingester``.
INGESTERS = IngesterRegistry(entry_points="compoworld.ingesters")


def register(ingester: Ingester, *, registry: IngesterRegistry | None = None) -> Ingester:
    """Register ``ingester`` in ``registry`` (the default registry if None) and return it."""
    return (registry if registry is not None else INGESTERS).register(ingester)
