"""Walks over services that stay in a vertical and spread over the whole library.

``WalkPolicy`` is the weighting: a start is drawn per *service* (never per tool, so a service
with hundreds of tools is not started from hundreds of times more often) and down-weighted by
how often the service was used already; a step prefers a target of the walk's vertical and a
service not used much yet. ``service_walks`` draws walks on the graph alone (no execution):
what the graph allows, measured by ``walk_stats`` (``bench/bench_graph.py``); the task
generator can take the same policy for its executed walks.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from orchestrator.graph.model import GraphEdge, ToolGraph, ToolNode

__all__ = ["WalkPolicy", "WalkStats", "service_walks", "walk_stats"]


@dataclass
class WalkPolicy:
    """Weights of starts and steps; ``uses`` counts walks per service as they are drawn."""

    same_vertical: float = 4.0
    new_service: float = 2.0
    spread: float = 2.0
    uses: Counter[str] = field(default_factory=Counter)

    def start_weight(self, service: str) -> float:
        return 1.0 / (1.0 + self.uses[service]) ** self.spread

    def step_weight(self, walk_services: Sequence[str], vertical: str, target: ToolNode) -> float:
        weight = 1.0 / (1.0 + self.uses[target.service]) ** (self.spread / 2)
        if target.domain == vertical:
            weight *= self.same_vertical
        if target.service not in walk_services:
            weight *= self.new_service
        return weight

    def record(self, services: Sequence[str]) -> None:
        self.uses.update(set(services))


@dataclass(frozen=True)
class WalkStats:
    """How walks spread: the busiest service's share of walks, and same-vertical service pairs."""

    walks: int
    services_used: int
    max_service_share: float
    same_vertical_pair_share: float
    mean_services: float


def _choose(rng: random.Random, weighted: Sequence[tuple[float, GraphEdge]]) -> GraphEdge:
    total = sum(w for w, _ in weighted)
    pick = rng.random() * total
    for weight, item in weighted:
        pick -= weight
        if pick <= 0:
            return item
    return weighted[-1][1]


def service_walks(
    graph: ToolGraph, n: int, seed: int = 0, length: int = 4, policy: WalkPolicy | None = None
) -> list[list[str]]:
    """``n`` walks of up to ``length`` tools, each as the services it visits in order."""
    policy = policy or WalkPolicy()
    rng = random.Random(seed)
    starts: dict[str, list[ToolNode]] = {}
    for node in graph.nodes:
        if node.outputs:
            starts.setdefault(node.service, []).append(node)
    services = sorted(starts)
    walks: list[list[str]] = []
    for _ in range(n if services else 0):
        weights = [policy.start_weight(s) for s in services]
        service = rng.choices(services, weights)[0]
        node = rng.choice(starts[service])
        visited = [node.service]
        for _step in range(length - 1):
            edges = [e for e in graph.out_edges(node.id) if e.cross_service]
            if not edges:
                break
            weighted = [(policy.step_weight(visited, node.domain, graph.node(e.target)), e) for e in edges]
            node = graph.node(_choose(rng, weighted).target)
            if node.service not in visited:
                visited.append(node.service)
        policy.record(visited)
        walks.append(visited)
    return walks


def walk_stats(graph: ToolGraph, walks: Sequence[Sequence[str]]) -> WalkStats:
    """Spread and vertical coherence of ``walks`` (only walks over 2+ services have pairs)."""
    domain = {n.service: n.domain for n in graph.nodes}
    counts = Counter(s for w in walks for s in set(w))
    pairs = same = 0
    for walk in walks:
        for i, a in enumerate(walk):
            for b in walk[i + 1 :]:
                pairs += 1
                same += domain[a] == domain[b]
    return WalkStats(
        walks=len(walks),
        services_used=len(counts),
        max_service_share=max(counts.values()) / len(walks) if walks else 0.0,
        same_vertical_pair_share=same / pairs if pairs else 0.0,
        mean_services=sum(len(w) for w in walks) / len(walks) if walks else 0.0,
    )
