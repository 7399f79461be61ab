"""Build a deterministic sample of mid-size corpus documents and probe every service for 5xx (issue 2).

    .venv/bin/python bench/corpus_sample.py [--n 40] [--seed 1] [--out DIR]

Prints: documents built / attempted, conformance pass, implemented share, 5xx count.
Target: at least 90% built, no 5xx from any service.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compoworld.corpus import sample_corpus
from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_library
from compoworld.synth.verify import probe_server_errors


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    ns = parser.parse_args()
    out = ns.out or Path(tempfile.mkdtemp(prefix="corpus-sample-"))
    docs = sample_corpus(ns.n, ns.seed)
    report = build_library([d.path for d in docs], out, progress=True)
    built = len(report.services)
    verified = sum(1 for s in report.services if s.verified)
    bad: list[str] = []
    for service in report.services:
        bad += asyncio.run(probe_server_errors(ServiceRuntime.from_folder(Path(service.folder), Settings())))
    print(f"documents: {len(docs)} sampled (10-60 operations, seed {ns.seed}) -> {out}")
    print(f"built: {built}/{len(docs)} ({built / len(docs):.0%}); verified clean: {verified}/{built}")
    print(f"tools: {report.tools}, implemented: {report.implemented} ({report.implemented_share:.0%})")
    for failure in report.failures:
        print(f"  not built: {failure.spec_path}: {failure.error[:160]}")
    print(f"5xx responses: {len(bad)}")
    for line in bad[:20]:
        print("  " + line)
    return 0 if built / len(docs) >= 0.9 and not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
