"""The dependency graph: typed producer->consumer edges within and across services, summary, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from orchestrator.graph import ToolGraph, build_graph, load_manifests
from orchestrator.graph.build import stream_graph
from orchestrator.graph.cli import graph
from tests.tasks_library import write_library


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp("lib"))


@pytest.fixture(scope="module")
def built(library: Path) -> ToolGraph:
    return build_graph(load_manifests(library))


def _edges(g: ToolGraph, source: str, target: str) -> list[tuple[str, str, str, bool]]:
    return [
        (e.field, e.arg, e.semantic, e.cross_service)
        for e in g.edges
        if (e.source, e.target) == (source, target)
    ]


def test_email_a_contact_read_produces_fills_invoice_and_message_arguments_across_services(
    built: ToolGraph,
) -> None:
    assert ("email", "customer_email", "email", True) in _edges(
        built, "crm.getContact", "billing.createInvoice"
    )
    assert ("items[].email", "to", "email", True) in _edges(built, "crm.listContacts", "mailer.createMessage")
    assert ("email", "recipient", "email", True) in _edges(built, "crm.getContact", "mailer.sendNotification")


def test_entity_keys_link_to_arguments_naming_the_same_entity(built: ToolGraph) -> None:
    edges = _edges(built, "crm.createContact", "crm.getContact")
    assert ("id", "id", "id:contact", False) in edges
    assert ("company_id", "id", "id:company", False) in _edges(built, "crm.getContact", "crm.getCompany")
    link = next(
        e
        for e in built.edges
        if (e.source, e.target, e.field) == ("crm.getContact", "crm.getCompany", "company_id")
    )
    assert link.link == "id"


def test_titles_feed_message_bodies_but_status_links_nothing(built: ToolGraph) -> None:
    assert ("title", "body", "title", True) in _edges(built, "calendar.getEvent", "mailer.createMessage")
    assert not [e for e in built.edges if e.semantic == "status"]


def test_no_tool_links_to_itself_and_every_edge_names_real_ports(built: ToolGraph) -> None:
    for edge in built.edges:
        assert edge.source != edge.target
        assert edge.field in {o.path for o in built.node(edge.source).outputs}
        assert edge.arg in {p.name for p in built.node(edge.target).inputs}
        assert edge.cross_service == (built.node(edge.source).service != built.node(edge.target).service)


def test_summary_counts_nodes_edges_components_and_services(built: ToolGraph) -> None:
    s = built.summary()
    assert (s.services, s.nodes, s.components, s.services_reached) == (4, 26, 1, 4)
    assert s.edges == len(built.edges) and s.cross_service_edges == sum(e.cross_service for e in built.edges)
    assert 0 < s.cross_service_pairs <= s.tool_pairs <= s.edges
    assert s.by_semantic["email"] > 0


def test_networkx_view_keeps_every_link(built: ToolGraph) -> None:
    nxg = built.to_networkx()
    assert nxg.number_of_nodes() == len(built.nodes) and nxg.number_of_edges() == len(built.edges)
    assert nxg.nodes["billing.createInvoice"]["operation"] == "create"


def test_a_single_service_library_has_no_cross_service_edges(tmp_path: Path) -> None:
    g = build_graph(load_manifests(write_library(tmp_path, ["crm"])))
    assert g.summary().cross_service_edges == 0 and g.summary().edges > 0


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(graph)
    return app


def test_graph_command_writes_json_that_round_trips_and_prints_a_summary(
    library: Path, tmp_path: Path
) -> None:
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(_cli(), ["--library", str(library), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "cross-service" in result.output.lower()
    again = ToolGraph.model_validate(json.loads(out.read_text()))
    assert again.summary() == build_graph(load_manifests(library)).summary()


def test_graph_command_warns_when_no_service_links_to_another(tmp_path: Path) -> None:
    result = CliRunner().invoke(_cli(), ["--library", str(write_library(tmp_path, ["billing"]))])
    assert result.exit_code == 0 and "no cross-service edges" in result.output


@pytest.mark.parametrize("setup", ["missing", "empty", "broken"])
def test_graph_command_names_a_bad_library_without_a_traceback(tmp_path: Path, setup: str) -> None:
    root = tmp_path / "lib"
    if setup != "missing":
        root.mkdir()
    if setup == "broken":
        (root / "svc").mkdir()
        (root / "svc" / "manifest.json").write_text("{not json")
    result = CliRunner().invoke(_cli(), ["--library", str(root)])
    assert (result.exit_code == 2 and result.exception is None) or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert str(root) in result.output.replace("\n", "")


def _starter() -> Path:
    return Path(__file__).resolve().parents[1] / "generated_services"


@pytest.mark.parametrize("which", ["tasks_library", "starter"])
def test_streaming_one_manifest_at_a_time_builds_the_same_graph(
    which: str, library: Path, tmp_path: Path
) -> None:
    root = library if which == "tasks_library" else _starter()
    streamed, skipped, services = stream_graph(root)
    whole = build_graph(load_manifests(root))
    assert not skipped and services == len(whole.services)
    assert streamed.model_dump_json() == whole.model_dump_json()  # nodes, ports, library version
    assert [e.model_dump() for e in streamed.iter_edges()] == [e.model_dump() for e in whole.iter_edges()]
    assert streamed.summary() == whole.summary()


def test_streaming_skips_a_folder_that_does_not_load_and_links_the_rest(
    library: Path, tmp_path: Path
) -> None:
    root = tmp_path / "lib"
    shutil.copytree(library, root)
    (root / "aaa_broken").mkdir()
    (root / "aaa_broken" / "manifest.json").write_text("{not json")
    heard: list[str] = []
    streamed, skipped, services = stream_graph(root, on_skip=lambda miss: heard.append(miss.folder))
    assert [Path(s.folder).name for s in skipped] == ["aaa_broken"] and heard == [skipped[0].folder]
    assert "aaa_broken" in skipped[0].reason and services == len(streamed.services)
    assert streamed.model_dump_json() == build_graph(load_manifests(library)).model_dump_json()
