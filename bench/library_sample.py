"""Carve a deterministic sample out of a built library: links to ``n`` of its service folders.

    .venv/bin/python bench/library_sample.py --library /tmp/corpus-all --n 200 --seed 1 --out /tmp/tg-lib200

The services are ranked by sha256 of seed and name (``compoworld.seeding.derive_seed``) and the first
``n`` taken; each becomes a symbolic link in ``--out`` to the built folder, so a sample of the whole
corpus costs no build (the built library is only read). Folders the catalog skips are not taken.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compoworld.catalog import read_catalog
from compoworld.seeding import derive_seed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    ns = parser.parse_args()
    names = read_catalog(ns.library).names()
    chosen = sorted(sorted(names, key=lambda n: (derive_seed("library-sample", ns.seed, n), n))[: ns.n])
    ns.out.mkdir(parents=True, exist_ok=True)
    if any(ns.out.iterdir()):
        raise SystemExit(f"{ns.out} is not empty")
    for name in chosen:
        (ns.out / name).symlink_to((ns.library / name).resolve(), target_is_directory=True)
    print(f"{len(chosen)} of {len(names)} services of {ns.library} linked into {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
