"""The ingester registry: source formats are data, found by name or by sniffing a document.

An ingester is a name, a ``detect(doc) -> bool`` and an ``ingest(doc, source_file)
-> ServiceSpec``. Each ingester module registers itself when imported (the
built-in ones are imported by ``compoworld.specs``), so adding a format never
means editing a central list. Detection asks ingesters in ``priority`` order
(lower first, then by name) and takes the first that claims the document.
A caller that wants its own set passes an ``IngesterRegistry`` explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from compoworld.specs.model import ServiceSpec

__all__ = ["INGESTERS", "Ingester", "IngesterRegistry", "register"]


@dataclass(frozen=True)
class Ingester:
    """One source format."""

    name: str
    detect: Callable[[Any], bool]
    ingest: Callable[[Any, str], ServiceSpec]
    priority: int = 50


class IngesterRegistry:
    """Ingesters by name, asked in priority order when sniffing a document."""

    def __init__(self, ingesters: tuple[Ingester, ...] = ()) -> None:
        self._by_name: dict[str, Ingester] = {}
        for ingester in ingesters:
            self.register(ingester)

    def register(self, ingester: Ingester, *, replace: bool = False) -> Ingester:
        """Add ``ingester``; registering another one under a taken name needs ``replace=True``."""
        current = self._by_name.get(ingester.name)
        if current is not None and current != ingester and not replace:
            raise ValueError(f"an ingester named {ingester.name!r} is already registered")
        self._by_name[ingester.name] = ingester
        return ingester

    def get(self, name: str) -> Ingester:
        """The ingester called ``name``; KeyError naming the known ones otherwise."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no ingester named {name!r} (known: {', '.join(self.names())})") from None

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
        return iter(sorted(self._by_name.values(), key=lambda i: (i.priority, i.name)))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)


INGESTERS = IngesterRegistry()


def register(ingester: Ingester, *, registry: IngesterRegistry | None = None) -> Ingester:
    """Register ``ingester`` in ``registry`` (the default registry if None) and return it."""
    return (registry if registry is not None else INGESTERS).register(ingester)
