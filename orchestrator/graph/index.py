"""The graph's storage: an index from role to the ports that produce and consume it.

Edges are never stored. A producer's out-edges are drawn from the consumers of its output's
role, at most ``FanOut`` of them per output: first tools of the same service, then of other
services of the same vertical (the service's domain), then a few of other verticals. Each
list is read from a different offset (a sha256 of the producer and its field), so producers of
a popular role (``email``) reach different consumers and the links spread over the library
instead of piling onto the first tools in name order. Memory is linear in ports; the edges of
one tool cost O(fan-out) to draw.

A *role* is the semantic type, except for generic ones (dates, quantities, percentages), which
are qualified by the field's own words: ``dueDate`` (``date:due``) feeds ``due_date`` but not
``birth_date``. Identity keys (``id:<entity>``) link as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from compoworld.seeding import derive_seed
from compoworld.specs.words import split_words
from orchestrator.graph.model import FanOut, GraphEdge, ToolNode
from orchestrator.graph.ports import ACCEPTS

__all__ = ["QUALIFIED", "Link", "RoleIndex", "link_role", "port_roles"]

#: Semantic types too generic to link on their own: the field's words qualify them.
QUALIFIED = frozenset({"date", "date-time", "quantity", "percent"})
_FILLER = frozenset({"at", "on", "of", "the", "a", "value", "time", "date", "datetime", "dt", "ts"})
#: One edge as drawn: (source node index, target node index, output field, target argument, semantic).
Link = tuple[int, int, str, str, str]


def link_role(semantic: str, name: str) -> str:
    """The role a port links on (see the module docstring)."""
    if semantic not in QUALIFIED:
        return semantic
    leaf = name.rsplit(".", 1)[-1].replace("[]", "")
    words = [w for w in split_words(leaf) if w not in _FILLER and w not in split_words(semantic)]
    return f"{semantic}:{'_'.join(words)}" if words else semantic


def port_roles(semantic: str, name: str) -> list[str]:
    """The roles an input accepts: its own, and those of the semantic types it also takes."""
    own = link_role(semantic, name)
    return [own, *sorted(ACCEPTS.get(semantic, frozenset()) - {own})]


@dataclass
class _Consumers:
    """The consumers of one role: all of them, and grouped by service and by vertical."""

    all: list[tuple[int, int]] = field(default_factory=list)  # (node index, input index), by node id
    by_service: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    by_vertical: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


def _offset(key: str, size: int) -> int:
    return derive_seed(key) % size


class RoleIndex:
    """Role -> consumers over a sorted node list; draws each output's bounded out-edges on demand."""

    def __init__(self, nodes: Sequence[ToolNode], fanout: FanOut | None = None) -> None:
        self.nodes = nodes
        self.fanout = fanout or FanOut()
        self.position = {n.id: i for i, n in enumerate(nodes)}
        self.roles: dict[str, _Consumers] = {}
        for i, node in enumerate(nodes):
            for j, port in enumerate(node.inputs):
                for role in port_roles(port.semantic, port.name):
                    group = self.roles.setdefault(role, _Consumers())
                    group.all.append((i, j))
                    group.by_service.setdefault(node.service, []).append((i, j))
                    group.by_vertical.setdefault(node.domain, []).append((i, j))

    def _draw(
        self, pool: list[tuple[int, int]], k: int, key: str, skip: Callable[[int], bool]
    ) -> list[tuple[int, int]]:
        """Up to ``k`` entries of ``pool`` from a key-dependent offset, skipping some (scan bounded)."""
        if k <= 0 or not pool:
            return []
        start = _offset(key, len(pool))
        picked: list[tuple[int, int]] = []
        for step in range(min(len(pool), 8 * k + 16)):
            entry = pool[(start + step) % len(pool)]
            if not skip(entry[0]):
                picked.append(entry)
                if len(picked) == k:
                    break
        return picked

    def consumers_of(self, source: ToolNode, path: str, semantic: str) -> list[tuple[int, int]]:
        """The (node, input) pairs one output of ``source`` feeds, at most ``fanout.total``: its own
        service first, then its vertical, then the rest (slots one tier leaves unused go outwards)."""
        group = self.roles.get(link_role(semantic, path))
        if group is None:
            return []
        me = self.position[source.id]
        nodes = self.nodes
        key = f"{source.id}|{path}"
        fan = self.fanout
        same = self._draw(group.by_service.get(source.service, []), fan.same_service, key, me.__eq__)
        room = fan.same_vertical + fan.same_service - len(same)  # unused slots flow outwards
        vertical = self._draw(
            group.by_vertical.get(source.domain, []), room, key, lambda i: nodes[i].service == source.service
        )
        room = fan.total - len(same) - len(vertical)
        other = self._draw(group.all, room, key, lambda i: nodes[i].domain == source.domain)
        return same + vertical + other

    def links_of(self, source: int) -> list[Link]:
        """The links out of node ``source`` (an index), sorted by (target id, field, argument)."""
        nodes = self.nodes
        node = nodes[source]
        links: list[Link] = []
        for out in node.outputs:
            for i, j in self.consumers_of(node, out.path, out.semantic):
                links.append((source, i, out.path, nodes[i].inputs[j].name, out.semantic))
        links.sort(key=lambda link: (nodes[link[1]].id, link[2], link[3]))
        return links

    def iter_links(self) -> Iterator[Link]:
        """All links, by source id, as plain tuples: what a pass over every edge needs, without
        building one ``GraphEdge`` per edge (most of the cost of drawing them)."""
        for source in range(len(self.nodes)):
            yield from self.links_of(source)

    def edge(self, link: Link) -> GraphEdge:
        """The ``GraphEdge`` of one link."""
        source, target = self.nodes[link[0]], self.nodes[link[1]]
        semantic = link[4]
        return GraphEdge.model_construct(  # many edges: skip re-validating known-good fields
            source=source.id,
            target=target.id,
            field=link[2],
            arg=link[3],
            semantic=semantic,
            link="id" if semantic.startswith("id:") else "value",
            cross_service=source.service != target.service,
        )

    def out_edges(self, source: ToolNode) -> list[GraphEdge]:
        """Every edge out of ``source``, sorted by (target, field, argument)."""
        return [self.edge(link) for link in self.links_of(self.position[source.id])]

    def iter_edges(self) -> Iterator[GraphEdge]:
        """All edges, by source id (drawn one tool at a time: nothing is kept)."""
        for link in self.iter_links():
            yield self.edge(link)
