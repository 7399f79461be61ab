"""Seed fidelity of the starter library and of a deterministic corpus sample (issue 10, item 6).

    .venv/bin/python bench/seed_fidelity.py [--n 40] [--seed 1] [--library generated_services] [--out DIR]

Builds ``--n`` arbitrary mid-size corpus documents (``compoworld.corpus.sample_corpus``, no
verification: seeds do not depend on it), then runs ``compoworld.synth.fidelity.check_library`` over
the library and over the sample, and prints, for each: typed fields valid per kind, filler
phrases, date order, country coherence, integer counts, line totals, keys shared between
services and how many population members recur in 2+ services. Targets: >= 99% of typed
fields valid, 0 fillers, 0 date-order violations (exit 1 otherwise). Figures: docs/fidelity.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compoworld.corpus import sample_corpus
from compoworld.manifest import library_folders
from compoworld.settings import bundled_library
from compoworld.synth.build import build_library
from compoworld.synth.fidelity import FidelityReport, check_library


def _print(title: str, report: FidelityReport) -> bool:
    print(f"\n== {title}: {report.services} services, {report.rows} seed rows")
    print(f"typed fields valid: {report.typed_valid_share:.2%}")
    for kind, tally in sorted(report.typed.items()):
        print(f"  {kind:9} {tally.checked - tally.failed:6}/{tally.checked:<6} {tally.share:.2%}")
        for example in tally.examples[:3]:
            print(f"      {example}")
    print(f"filler phrases in typed/identifier fields: {report.fillers.failed} of {report.fillers.checked}")
    for example in report.fillers.examples[:5]:
        print(f"      {example}")
    print(
        f"date pairs in order: {report.date_order.checked - report.date_order.failed}/{report.date_order.checked}"
    )
    for kind, tally in sorted(report.coherence.items()):
        print(f"  country agrees with {kind:8} {tally.checked - tally.failed}/{tally.checked}")
    print(
        f"integer counts: {report.integer_counts.checked - report.integer_counts.failed}/{report.integer_counts.checked}"
    )
    print(
        f"line totals = qty x price: {report.line_totals.checked - report.line_totals.failed}/{report.line_totals.checked}"
    )
    print(f"key strings shared by 2+ services: {report.shared_keys}")
    print(
        f"population: {report.members_seen} members cast; in 2+ services: {report.people_in_2plus} people, "
        f"{report.orgs_in_2plus} organisations; {report.emails_in_2plus} emails recur in 2+ services"
    )
    return report.typed_valid_share >= 0.99 and not report.fillers.failed and not report.date_order.failed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    ns = parser.parse_args()
    library = ns.library or bundled_library()
    ok = _print(f"library {library}", check_library(library_folders(library)))
    out = ns.out or Path(tempfile.mkdtemp(prefix="seed-fidelity-"))
    docs = sample_corpus(ns.n, ns.seed)
    built = build_library([d.path for d in docs], out, progress=True, verify=False)
    print(
        f"\ncorpus sample: {len(docs)} documents (10-60 operations, seed {ns.seed}), built {len(built.services)} -> {out}"
    )
    for failure in built.failures:
        print(f"  not built: {failure.spec_path}: {failure.error[:120]}")
    ok = _print("corpus sample", check_library(library_folders(out))) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
