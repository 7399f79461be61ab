"""Benchmark: CPU the corpus build spends per tool, this tree against a baseline tree, side by side (issue 12).

    python bench/build_cpu.py [--baseline TREE] [--docs DIR] [--n 8] [--seed 12] [--rounds 2] [--out DIR]

Builds a deterministic sample of corpus documents (``sample_corpus`` in three size bands, all
providers; or every document of ``--docs``) with ``build_corpus(workers=1)`` in a fresh process
per tree and round, as ``compoworld build --corpus DIR --workers 1`` does, then builds it again in
the same process into a second library (warm: imports and caches paid). Prints process CPU per
tool, cold and warm, for each tree, alternating trees each round, and the ratio. With
``--baseline`` (another checkout, e.g. ``git worktree add --detach /tmp/base main``) it also
compares the two libraries file by file: the figures only count if they are byte-identical
(``build.json`` and ``index.json`` differ only in the generator fingerprint, which is blanked).
CPU time of this process is what is measured, so other load on a shared machine does not count.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_BANDS = ((1, 15), (16, 60), (61, 250))


def _sample(n: int, seed: int, scratch: Path) -> Path:
    """Copy a deterministic sample of corpus documents (three size bands) under ``scratch``."""
    sys.path.insert(0, str(ROOT))
    from bench.corpus_files import copy_documents
    from compoworld.corpus import sample_corpus

    picked = []
    shares = (n - 2 * (n // 3), n // 3, n // 3)
    for count, (lo, hi) in zip(shares, _BANDS, strict=True):
        picked += sample_corpus(count, seed, min_ops=lo, max_ops=hi, skip_big_providers=False)
    docs = copy_documents(picked, scratch / "docs")
    print(
        f"sample: {len(picked)} documents (seed {seed}): "
        + ", ".join(f"{d.rel} ({d.operations})" for d in picked)
    )
    return docs


def _worker(docs: Path, out: Path) -> None:
    """In a fresh process with the tree under test first on sys.path: a cold build, then a warm one."""
    from compoworld.synth.batch import BatchOptions, build_corpus

    figures: dict[str, Any] = {}
    for label in ("cold", "warm"):
        try:  # the warm pass pays for the DDL again, as a build of other documents would
            from compoworld.synth import build

            getattr(build, "_SCHEMAS", {}).clear()
        except ImportError:
            pass
        start = os.times()
        report, _ = build_corpus(docs, out / label, BatchOptions(workers=1, progress=False))
        end = os.times()
        cpu = (end.user - start.user) + (end.system - start.system)
        figures[label] = {"cpu_s": cpu, "tools": report.tools, "services": len(report.services)}
    print("RESULT " + json.dumps(figures))


def _run(tree: Path, docs: Path, out: Path) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the script's own folder (bench/) holds no package
    cmd = [sys.executable, __file__, "--worker", str(docs), str(out)]
    proc = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=False)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"build in {tree} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return dict(json.loads(line[len("RESULT ") :]))


def _differences(a: Path, b: Path) -> list[str]:
    """Files that differ between two libraries (the generator fingerprint blanked); ``.build`` skipped."""
    from bench.corpus_files import FINGERPRINT  # here, not at the top: a worker imports only its tree

    out: list[str] = []

    def walk(cmp: filecmp.dircmp[str], rel: str) -> None:
        out.extend(f"{rel}{n} (only one side)" for n in cmp.left_only + cmp.right_only if n != ".build")
        for name in cmp.common_files:
            left, right = (Path(cmp.left) / name).read_bytes(), (Path(cmp.right) / name).read_bytes()
            if name in ("build.json", "index.json"):
                left, right = FINGERPRINT.sub(rb"\1", left), FINGERPRINT.sub(rb"\1", right)
            if left != right:
                out.append(rel + name)
        for name, sub in cmp.subdirs.items():
            if name != ".build":
                walk(sub, f"{rel}{name}/")

    walk(filecmp.dircmp(a, b, ignore=[]), "")
    return out


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        _worker(Path(sys.argv[2]), Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, default=None, help="Another checkout to compare against.")
    parser.add_argument("--docs", type=Path, default=None, help="Build these documents instead of a sample.")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    ns = parser.parse_args()
    scratch = ns.out or Path(tempfile.mkdtemp(prefix="build-cpu-"))
    docs = ns.docs or _sample(ns.n, ns.seed, scratch)
    trees = [("this tree", ROOT)] + ([("baseline", ns.baseline.resolve())] if ns.baseline else [])
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
    for round_ in range(ns.rounds):
        for label, tree in trees if round_ % 2 == 0 else trees[::-1]:
            started = time.perf_counter()
            figures = _run(tree, docs, scratch / label.replace(" ", "-"))
            runs[label].append(figures)
            cold, warm = figures["cold"], figures["warm"]
            print(
                f"round {round_ + 1} {label:9s}: {cold['tools']} tools in {cold['services']} services; "
                f"cold {cold['cpu_s']:.2f} s CPU = {1000 * cold['cpu_s'] / max(1, cold['tools']):.1f} ms/tool, "
                f"warm {1000 * warm['cpu_s'] / max(1, warm['tools']):.1f} ms/tool "
                f"({time.perf_counter() - started:.0f} s wall)",
                flush=True,
            )
    if ns.baseline:
        for phase in ("cold", "warm"):
            ours = [r[phase]["cpu_s"] for r in runs["this tree"]]
            base = [r[phase]["cpu_s"] for r in runs["baseline"]]
            ratios = ", ".join(f"{a / b:.2f}x" for a, b in zip(ours, base, strict=True))
            print(
                f"{phase}: this tree / baseline CPU per round: {ratios} (best {min(ours) / min(base):.2f}x)"
            )
        diff = []
        for phase in ("cold", "warm"):
            diff += [
                f"{phase}/{d}"
                for d in _differences(scratch / "this-tree" / phase, scratch / "baseline" / phase)
            ]
        print(f"libraries byte-identical: {not diff}" + (f"; differing: {diff[:20]}" if diff else ""))
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
