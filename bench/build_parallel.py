"""Benchmark: how busy a parallel corpus build keeps its workers, this tree against a baseline, side by side (issue 12).

    python bench/build_parallel.py --baseline TREE [--n 150] [--seed 4] [--workers 2] [--recycle 25]
                                   [--max-ops 400] [--rounds 2]

Builds the same deterministic sample of corpus documents (1 to ``--max-ops`` operations, big
providers included) cold with ``build_corpus(workers=N)``, as ``compoworld build --corpus DIR
--workers N`` does, in a fresh process per tree and round, alternating the trees. Prints each
run's wall time, the workers' CPU, their busy share (worker CPU / (wall x workers)), pool renewals,
and the ratios; then whether the two trees' libraries are byte-identical. Wall time is what this
measures, so run it on a machine that is otherwise quiet, or read the busy share beside the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.corpus_files import copy_documents, library_files  # noqa: E402
from compoworld.corpus import sample_corpus  # noqa: E402

_RUN = """
import json, sys
from pathlib import Path
from compoworld.synth.batch import BatchOptions, build_corpus
_, s = build_corpus(Path(sys.argv[1]), Path(sys.argv[2]),
                    BatchOptions(workers=int(sys.argv[3]), recycle=int(sys.argv[4]), progress=False))
print(json.dumps({"wall_s": s.wall_s, "worker_cpu_s": s.worker_cpu_s, "cpu_s": s.cpu_s,
                  "units": s.units, "renewals": s.pool_renewals, "failed": s.failed}))
"""


def _build(tree: Path, corpus: Path, out: Path, workers: int, recycle: int) -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", _RUN, str(corpus), str(out), str(workers), str(recycle)]
    done = subprocess.run(
        command, env=env, cwd=tree, capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"build in {tree} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--baseline", type=Path, required=True, help="another checkout (git worktree add --detach)"
    )
    parser.add_argument("--n", type=int, default=150)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--recycle", type=int, default=25, help="units per worker before a pool is renewed")
    parser.add_argument("--max-ops", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    ns = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-build-parallel-"))
    docs = sample_corpus(ns.n, ns.seed, min_ops=1, max_ops=ns.max_ops, skip_big_providers=False)
    corpus = copy_documents(docs, scratch / "corpus")
    trees = {"baseline": ns.baseline.resolve(), "this tree": ROOT}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    try:
        for round_ in range(ns.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                s = _build(trees[name], corpus, scratch / name, ns.workers, ns.recycle)
                busy = s["worker_cpu_s"] / max(s["wall_s"] * ns.workers, 1e-9)
                walls[name].append(s["wall_s"])
                print(
                    f"round {round_ + 1} {name:9}: {s['units']:.0f} units, {s['wall_s']:.1f} s wall, "
                    f"workers {s['worker_cpu_s']:.1f} s CPU, busy {busy:.0%}, "
                    f"{s['renewals']:.0f} pool renewals, {s['failed']:.0f} failed",
                    flush=True,
                )
        for i, (base, new) in enumerate(zip(walls["baseline"], walls["this tree"], strict=True), 1):
            print(f"round {i}: wall this tree / baseline = {new / base:.2f}x")
        # the generator fingerprint hashes the code, so it differs between the trees: blanked
        identical = library_files(scratch / "baseline", blank_fingerprint=True) == library_files(
            scratch / "this tree", blank_fingerprint=True
        )
        print(f"libraries byte-identical: {identical}")
        return 0 if identical else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
