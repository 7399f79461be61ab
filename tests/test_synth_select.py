"""The corpus selection policy: versions, empty documents, unique provider-qualified names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.synth.select import DocumentFacts, plan_units, survey_document


def _doc(provider: str, service: str | None, version: str, ops: list[str], title: str = "") -> dict[str, Any]:
    info: dict[str, Any] = {
        "title": title or f"{provider} {service or ''}",
        "version": version,
        "x-providerName": provider,
    }
    if service:
        info["x-serviceName"] = service
    paths = {
        p: {"get": {"operationId": p.strip("/").replace("/", "_") or "root", "responses": {}}} for p in ops
    }
    return {"openapi": "3.0.0", "info": info, "paths": paths}


def _survey(tmp_path: Path, docs: dict[str, dict[str, Any]]) -> list[DocumentFacts]:
    facts = []
    for rel, doc in docs.items():
        path = tmp_path / "api" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        facts.append(survey_document(path, rel, tmp_path / "stage"))
    return facts


def _plan(tmp_path: Path, docs: dict[str, dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    plan = plan_units(_survey(tmp_path, docs), tmp_path / "api", tmp_path / "stage")
    return {u.source: u.name for u in plan.units}, {o.source: o.reason for o in plan.outcomes}


def test_the_newest_version_supersedes_older_ones_it_covers(tmp_path: Path) -> None:
    ops = [f"/items/{i}" for i in range(10)]
    built, skipped = _plan(
        tmp_path,
        {
            "ex.com/store-2.0.json": _doc("ex.com", "store-2.0", "1", ops),
            "ex.com/store-3.1.json": _doc("ex.com", "store-3.1", "1", [*ops, "/extra"]),
        },
    )
    assert list(built) == ["ex.com/store-3.1.json"]
    assert "superseded by ex.com/store-3.1.json" in skipped["ex.com/store-2.0.json"]


def test_an_older_version_with_a_surface_of_its_own_is_kept(tmp_path: Path) -> None:
    built, _ = _plan(
        tmp_path,
        {
            "aws.com/waf.json": _doc("aws.com", "waf", "2015", [f"/classic/{i}" for i in range(6)]),
            "aws.com/wafv2.json": _doc("aws.com", "wafv2", "2019", [f"/v2rules/{i}" for i in range(6)]),
        },
    )
    assert sorted(built) == ["aws.com/waf.json", "aws.com/wafv2.json"]


def test_a_prerelease_gives_way_to_the_stable_version(tmp_path: Path) -> None:
    ops = [f"/users/{i}" for i in range(8)]
    beta_only = [f"/beta-only/{i}" for i in range(16)]
    built, skipped = _plan(
        tmp_path,
        {
            "ms.com/graph.json": _doc("ms.com", "graph", "1.0", ops),
            "ms.com/graph-beta.json": _doc("ms.com", "graph-beta", "1.0", ops + beta_only),
        },
    )
    assert list(built) == ["ms.com/graph.json"]  # a third of the beta is covered: enough for a prerelease
    assert "superseded" in skipped["ms.com/graph-beta.json"]


def test_documents_without_operations_or_unreadable_are_reported(tmp_path: Path) -> None:
    facts = _survey(tmp_path, {"empty.com.json": _doc("empty.com", None, "1", [])})
    broken = tmp_path / "api" / "broken.json"
    broken.write_text('{"openapi": ')
    facts.append(survey_document(broken, "broken.json", tmp_path / "stage"))
    plan = plan_units(facts, tmp_path / "api", tmp_path / "stage")
    outcomes = {o.source: (o.status, o.reason) for o in plan.outcomes}
    assert outcomes["empty.com.json"] == ("skipped", "no operations")
    assert outcomes["broken.json"][0] == "failed" and "cannot read" in outcomes["broken.json"][1]
    assert plan.units == []


def test_names_are_qualified_by_provider_where_slugs_would_collide(tmp_path: Path) -> None:
    built, _ = _plan(
        tmp_path,
        {
            "bbc.co.uk.json": _doc("bbc.co.uk", None, "1", ["/a"]),
            "bbc.com.json": _doc("bbc.com", None, "1", ["/b"]),
            "apideck.com/crm.json": _doc("apideck.com", "crm", "1", ["/c"]),
        },
    )
    assert built == {
        "bbc.co.uk.json": "bbc_co_uk",
        "bbc.com.json": "bbc_com",
        "apideck.com/crm.json": "apideck_crm",
    }


def test_a_huge_document_becomes_named_parts(tmp_path: Path) -> None:
    doc = _doc("big.com", None, "1", [f"/{res}/{i}" for res in ("orders", "users") for i in range(6)])
    facts = [
        survey_document(
            _write(tmp_path, "big.com.json", doc), "big.com.json", tmp_path / "stage", max_tools=8
        )
    ]
    plan = plan_units(facts, tmp_path, tmp_path / "stage")
    assert sorted((u.name, u.part, u.operations) for u in plan.units) == [
        ("big_orders", "orders", 6),
        ("big_users", "users", 6),
    ]
    assert plan.split["big.com.json"] == "12 operations: split into 2 parts"
    assert all(Path(u.input_path).is_file() for u in plan.units)


def _write(tmp_path: Path, rel: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / rel
    path.write_text(json.dumps(doc))
    return path
