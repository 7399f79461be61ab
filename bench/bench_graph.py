"""Graph memory and time against library size, side by side with what all-pairs linking would hold.

    .venv/bin/python bench/bench_graph.py --library generated_services --sizes 5000,20000,50000

A library of the wanted size is made by renaming copies of the given library's services
(``crm`` -> ``crm_c1``...), so every size has the same mix of tools. For each size it prints:
the CPU time to build the graph (tools, ports, role index) and to draw every edge once (the
summary pass), the Python heap the graph holds (tracemalloc) and the process RSS, the
edges drawn against the edges all-pairs linking on the same roles would materialise, and the
spread of ``--walks`` structural walks (busiest service's share, same-vertical pairs).

    .venv/bin/python bench/bench_graph.py --library DIR --memory

``--memory`` builds the graph of the library as it is, twice, each in a fresh process so its peak
RSS is its own: every manifest held as pydantic objects (``build_graph(load_manifests(...))``, the
path before streaming) and one manifest at a time (``stream_graph``, what ``compoworld graph``
runs); it prints peak RSS, CPU seconds and whether the two graph JSONs are byte-identical.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compoworld.catalog import load_manifests_skipping
from compoworld.manifest import ServiceManifest
from compoworld.runtime.pool import rss_mb
from orchestrator.graph import build_graph
from orchestrator.graph.index import link_role
from orchestrator.graph.walks import service_walks, walk_stats


def scaled(manifests: list[ServiceManifest], tools: int) -> list[ServiceManifest]:
    """Renamed copies of ``manifests`` until the library has at least ``tools`` tools."""
    out: list[ServiceManifest] = []
    copy = 0
    while sum(len(m.tools) for m in out) < tools:
        suffix = f"_c{copy}" if copy else ""
        out += [m.model_copy(update={"name": m.name + suffix}) for m in manifests]
        copy += 1
    return out


def all_pairs_edges(graph: object) -> int:
    """Edges a materialised all-pairs graph on the same roles would hold (producers x consumers)."""
    index = graph._index  # type: ignore[attr-defined]
    total = 0
    for node in graph.nodes:  # type: ignore[attr-defined]
        for out in node.outputs:
            group = index.roles.get(link_role(out.semantic, out.path))
            total += len(group.all) if group else 0
    return total


def measure(manifests: list[ServiceManifest], walks: int) -> dict[str, object]:
    """CPU seconds (the machine is shared: wall time says little), heap held, edges, walk spread."""
    tracemalloc.start()
    traced = build_graph(manifests)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del traced
    start = time.process_time()
    graph = build_graph(manifests)
    built_s = time.process_time() - start
    start = time.process_time()
    summary = graph.summary()
    summary_s = time.process_time() - start
    start = time.process_time()
    drawn = service_walks(graph, walks, seed=0)
    walk_s = time.process_time() - start
    stats = walk_stats(graph, drawn)
    pairs = all_pairs_edges(graph)
    return {
        "services": summary.services,
        "tools": summary.nodes,
        "build_cpu_s": round(built_s, 2),
        "edges_cpu_s": round(summary_s, 2),
        "graph_mib": round(held / 2**20, 1),
        "rss_mib": round(rss_mb(), 1),
        "edges": summary.edges,
        "all_pairs_edges": pairs,
        "edge_ratio": round(summary.edges / pairs, 4) if pairs else None,
        "cross_service_edges": summary.cross_service_edges,
        "largest_component_services": summary.services_in_largest_component,
        "walks": stats.walks,
        "walk_cpu_s": round(walk_s, 2),
        "max_service_share": round(stats.max_service_share, 4),
        "same_vertical_pair_share": round(stats.same_vertical_pair_share, 4),
        "mean_services_per_walk": round(stats.mean_services, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, default=Path("generated_services"))
    parser.add_argument("--sizes", default="5000,20000", help="Tool counts, comma-separated.")
    parser.add_argument("--walks", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="Also write the rows here.")
    parser.add_argument("--memory", action="store_true", help="Held vs streamed, side by side (see above).")
    parser.add_argument("--path", choices=("held", "streamed"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.path is not None:
        return _one_path(args.library, args.path)
    if args.memory:
        return _memory(args.library)
    manifests, skipped = load_manifests_skipping(args.library)
    for miss in skipped:
        print(f"skipped {miss.folder}: {miss.reason}", file=sys.stderr)
    rows = []
    base = sum(len(m.tools) for m in manifests)
    print(f"base library {args.library}: {len(manifests)} services, {base} tools")
    header = (
        f"{'tools':>8} {'services':>8} {'build s':>8} {'edges s':>8} {'graph MiB':>9} {'RSS MiB':>9} "
        f"{'edges':>10} {'all-pairs':>12} {'ratio':>7} {'max svc':>7} {'same vert':>9}"
    )
    print(header)
    for size in [int(s) for s in args.sizes.split(",") if s]:
        row = measure(scaled(manifests, size), args.walks)
        rows.append(row)
        print(
            f"{row['tools']:>8} {row['services']:>8} {row['build_cpu_s']:>8} {row['edges_cpu_s']:>8} "
            f"{row['graph_mib']:>9} {row['rss_mib']:>9} {row['edges']:>10} {row['all_pairs_edges']:>12} "
            f"{row['edge_ratio']:>7} {row['max_service_share']:>7} {row['same_vertical_pair_share']:>9}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


def _one_path(library: Path, path: str) -> None:
    """One graph build in this process: its figures as one JSON line."""
    import hashlib
    import resource

    from orchestrator.graph.build import stream_graph

    c0 = time.process_time()
    if path == "held":
        graph = build_graph(load_manifests_skipping(library)[0])
    else:
        graph = stream_graph(library).graph
    text = graph.model_dump_json()
    c1 = time.process_time()
    figures = {
        "tools": len(graph.nodes),
        "cpu_s": round(c1 - c0, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "sha256": hashlib.sha256(text.encode()).hexdigest()[:16],
    }
    print(json.dumps(figures))


def _memory(library: Path) -> None:
    from bench.side_by_side import run_paths

    paths = {"held": "manifests held", "streamed": "streamed"}
    run_paths(__file__, ["--library", str(library)], paths, 12, "graph JSON")


if __name__ == "__main__":
    main()
