"""Carve a deterministic sample out of a built library: links to ``n`` of its service folders.

    .venv/bin/python bench/library_sample.py --library /tmp/corpus-all --n 200 --seed 1 --out /tmp/tg-lib200

The services are ranked by sha256 of seed and name (``compoworld.seeding.derive_seed``) and the first
``n`` taken; each becomes a symbolic link in ``--out`` to the built folder, so a sample of the whole
corpus costs no build (the built library is only read). Folders the catalog skips are not taken.

``--rewrite-manifests`` makes each service a folder of links instead, but for ``manifest.json``,
which is written as the renderer of this tree writes it (``render.manifest_text`` of the loaded
manifest; the model is the same, the file's form is today's), and copies the library's
``index.json`` after it: a library built by an older tree, hosted as a new build would write it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.progress import track

from compoworld.catalog import INDEX_FILE, read_catalog
from compoworld.manifest import load_manifest
from compoworld.seeding import derive_seed
from compoworld.synth.render import manifest_text


def _rewritten(src: Path, dst: Path) -> None:
    dst.mkdir()
    for item in sorted(src.iterdir()):
        if item.name == "manifest.json":
            (dst / item.name).write_text(manifest_text(load_manifest(src)), encoding="utf-8")
        else:
            (dst / item.name).symlink_to(item.resolve())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rewrite-manifests", action="store_true")
    ns = parser.parse_args()
    names = read_catalog(ns.library).names()
    chosen = sorted(sorted(names, key=lambda n: (derive_seed("library-sample", ns.seed, n), n))[: ns.n])
    ns.out.mkdir(parents=True, exist_ok=True)
    if any(ns.out.iterdir()):
        raise SystemExit(f"{ns.out} is not empty")
    for name in track(chosen, description="linking services"):
        if ns.rewrite_manifests:
            _rewritten((ns.library / name).resolve(), ns.out / name)
        else:
            (ns.out / name).symlink_to((ns.library / name).resolve(), target_is_directory=True)
    if ns.rewrite_manifests and (ns.library / INDEX_FILE).exists() and len(chosen) == len(names):
        shutil.copyfile(ns.library / INDEX_FILE, ns.out / INDEX_FILE)  # after the manifests: not stale
    print(f"{len(chosen)} of {len(names)} services of {ns.library} linked into {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
