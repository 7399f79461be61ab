"""The role index: edges only where roles match, bounded fan-out, the same vertical first, linear growth."""

from __future__ import annotations

from collections import Counter

from compoworld.manifest import ServiceManifest
from orchestrator.graph import ToolGraph, build_graph
from orchestrator.graph.index import link_role
from orchestrator.graph.model import FanOut
from orchestrator.graph.walks import WalkPolicy, service_walks, walk_stats
from tests.tasks_library import LIBRARY

VERTICALS = ("crm", "finance", "communication")


def _copies(n: int) -> list[ServiceManifest]:
    """``n`` services per kind (crm, billing, mailer), spread over three verticals."""
    out: list[ServiceManifest] = []
    for kind in ("crm", "billing", "mailer"):
        manifest, _ = LIBRARY[kind]()
        for i in range(n):
            domain = VERTICALS[i % len(VERTICALS)]
            out.append(manifest.model_copy(update={"name": f"{kind}{i:03d}", "domain": domain}))
    return out


def test_generic_types_link_only_when_the_fields_words_agree() -> None:
    assert link_role("date", "dueDate") == link_role("date", "due_date") == "date:due"
    assert link_role("date", "items[].birth_date") == "date:birth" != link_role("date", "due_on")
    assert link_role("date", "date") == "date" and link_role("email", "customer_email") == "email"


def test_no_output_feeds_more_consumers_than_the_fan_out_allows() -> None:
    fanout = FanOut(same_service=3, same_vertical=2, other_vertical=1)
    graph = build_graph(_copies(12), fanout)
    per_output = Counter((e.source, e.field) for e in graph.iter_edges())
    assert per_output and max(per_output.values()) <= fanout.total


def test_links_prefer_services_of_the_same_vertical() -> None:
    graph = build_graph(_copies(12), FanOut(same_service=4, same_vertical=4, other_vertical=1))
    domain = {n.id: n.domain for n in graph.nodes}
    cross = [e for e in graph.iter_edges() if e.cross_service]
    same = sum(domain[e.source] == domain[e.target] for e in cross)
    assert cross and same / len(cross) >= 0.6


def test_producers_of_one_role_reach_different_consumers() -> None:
    graph = build_graph(_copies(12), FanOut(same_service=2, same_vertical=2, other_vertical=1))
    email = [e for e in graph.iter_edges() if e.semantic == "email" and e.cross_service]
    targets = Counter(e.target.split(".")[0] for e in email)
    assert len(targets) >= 12  # not the first few consumers in name order for everyone
    assert max(targets.values()) <= 3 * len(email) / len(targets)


def test_edges_grow_linearly_with_the_library() -> None:
    small, large = (sum(1 for _ in build_graph(_copies(n)).iter_edges()) for n in (10, 20))
    assert 1.8 <= large / small <= 2.2  # all-pairs linking would be ~4x


def test_a_graph_round_trips_through_json_with_the_same_edges() -> None:
    graph = build_graph(_copies(4), FanOut(same_service=2, same_vertical=1, other_vertical=1))
    again = ToolGraph.model_validate_json(graph.model_dump_json())
    assert again.fanout == graph.fanout and again.edges == graph.edges


def test_walks_stay_in_a_vertical_and_spread_over_the_library() -> None:
    graph = build_graph(_copies(12))
    stats = walk_stats(graph, service_walks(graph, 400, seed=3))
    plain = walk_stats(graph, service_walks(graph, 400, seed=3, policy=WalkPolicy(same_vertical=1, spread=0)))
    assert stats.services_used == 36 and stats.mean_services >= 2
    assert stats.same_vertical_pair_share >= 0.6 > plain.same_vertical_pair_share
    assert stats.max_service_share <= 0.15 and stats.max_service_share <= plain.max_service_share
