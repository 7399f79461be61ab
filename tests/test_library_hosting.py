"""Hosting a library: a catalog read without loading services, services loaded on first use and
unloaded when idle, and a folder that does not load skipped by every command with its reason."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from compoworld.catalog import INDEX_FILE, load_manifests_skipping, read_catalog
from compoworld.cli import build_embedded_app, cli_app
from compoworld.deploy.entrypoint import EntrypointError, load_services
from compoworld.errors import ServiceUnavailable
from compoworld.runtime.pool import ServicePool, load_library_skipping
from compoworld.settings import Settings
from tests.orchestrator_fixture import serving, task_create, write_library

runner = CliRunner()


def _break_seed(folder: Path) -> None:
    """Seed rows that break the table's key constraint (two rows, one key): the folder cannot load."""
    seed = json.loads((folder / "seed.json").read_text())
    table = sorted(seed)[0]
    seed[table] = seed[table] + seed[table][:1]
    (folder / "seed.json").write_text(json.dumps(seed))


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """crm, desk, mail load; 'zbad' has seed rows breaking a unique key; 'junk' has no valid manifest."""
    root = write_library(tmp_path / "lib", ("crm", "desk", "mail", "zbad"))
    _break_seed(root / "zbad")
    (root / "junk").mkdir()
    (root / "junk" / "manifest.json").write_text("{not json")
    return root


def test_catalog_lists_services_without_loading_them_and_names_an_unreadable_folder(library: Path) -> None:
    catalog = read_catalog(library)
    assert catalog.names() == ["crm", "desk", "mail", "zbad"] and not catalog.from_index
    assert [Path(s.folder).name for s in catalog.skipped] == ["junk"]
    assert "manifest.json is not a valid service manifest" in catalog.skipped[0].reason
    crm = catalog.entry("crm")
    assert crm is not None and crm.tools == crm.implemented + crm.actions + crm.simulated > 0


def test_catalog_uses_index_json_only_while_it_is_newer_than_every_manifest(library: Path) -> None:
    shutil.rmtree(library / "junk")  # an index lists exactly the library's folders
    rows = [e.model_dump(mode="json") | {"title": "from the index"} for e in read_catalog(library).services]
    (library / INDEX_FILE).write_text(json.dumps({"services": rows}))
    indexed = read_catalog(library)
    assert indexed.from_index and {e.title for e in indexed.services} == {"from the index"}
    later = (library / INDEX_FILE).stat().st_mtime_ns + 10**9
    os.utime(library / "crm" / "manifest.json", ns=(later, later))
    assert not read_catalog(library).from_index


def test_pool_loads_on_first_use_and_unloads_the_least_recently_used_idle_service(library: Path) -> None:
    pool = ServicePool(library, Settings(), max_resident=2)
    assert pool.resident() == [] and len(pool) == 4 and "junk" not in pool
    pool["crm"].fork("ep-1")  # crm has a live episode: it must never be unloaded
    pool["desk"]
    pool["mail"]
    assert pool.resident() == ["crm", "mail"] and pool.stats.evictions == 1
    assert pool["crm"].has_episode("ep-1")
    pool["crm"].delete("ep-1")
    pool["desk"]
    assert pool.resident() == ["crm", "desk"] or pool.resident() == ["mail", "desk"]


def test_pool_reports_a_folder_that_does_not_load_with_the_folder_and_the_reason(library: Path) -> None:
    pool = ServicePool(library, Settings())
    with pytest.raises(ServiceUnavailable) as raised:
        pool.load("zbad")
    assert str(library / "zbad") in raised.value.reason and "UNIQUE" in raised.value.reason
    assert "zbad" in pool.broken and "junk" in pool.broken and pool.resident() == []


def test_loading_the_whole_library_skips_bad_folders_and_keeps_the_rest(library: Path) -> None:
    runtimes, skipped = load_library_skipping(library, Settings())
    assert sorted(runtimes) == ["crm", "desk", "mail"]
    assert sorted(Path(s.folder).name for s in skipped) == ["junk", "zbad"]
    manifests, missed = load_manifests_skipping(library)
    assert [m.name for m in manifests] == ["crm", "desk", "mail", "zbad"] and len(missed) == 1


async def test_up_serves_services_from_the_catalog_and_loads_one_on_its_first_call(library: Path) -> None:
    app, summary = build_embedded_app(library, Settings())
    assert "4 services (each loads on first use)" in summary
    pool = app.state.runtimes
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        listed = (await http.get("/services")).json()
        assert [r["name"] for r in listed] == ["crm", "desk", "mail", "zbad"] and pool.resident() == []
        assert "junk" in pool.broken
        tools = await http.get("/services/desk/tools")
        assert tools.status_code == 200 and tools.json() and pool.resident() == ["desk"]
        bad = await http.get("/services/zbad/tools")
        assert bad.status_code == 503 and "UNIQUE" in bad.json()["detail"]
        assert (await http.get("/services/nope/tools")).status_code == 404
        listed = {r["name"]: r for r in (await http.get("/services")).json()}
        assert "UNIQUE" in listed["zbad"]["error"] and listed["desk"]["loaded"] is True
        opened = await http.post("/episodes", json={"task": task_create().model_dump(mode="json")})
        assert opened.status_code == 201, opened.text
        assert set(pool.resident()) == {"crm", "desk"}
        health = (await http.get("/health")).json()
        assert (health["services"], health["resident"], health["broken"]) == (4, 2, 2)


async def test_a_lazily_hosted_service_s_rest_routes_see_only_their_own_path_parameters(
    library: Path,
) -> None:
    """The mount's ``{service}`` is not a tool argument: REST reads and lists answer as the spec says."""
    app, _ = build_embedded_app(library, Settings())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://cw") as http:
        opened = await http.post("/episodes", json={"services": ["crm"]})
        assert opened.status_code == 201, opened.text
        headers = {"X-Episode-Id": opened.json()["episode_id"]}
        one = await http.get("/services/crm/contacts/con_000001", headers=headers)
        assert one.status_code == 200 and one.json()["id"] == "con_000001"
        listed = await http.get("/services/crm/contacts", headers=headers)
        assert listed.status_code == 200, listed.text
        missing = await http.get("/services/crm/contacts/con_999999", headers=headers)
        assert missing.status_code == 404


def test_up_preload_loads_every_service_that_loads_and_names_the_others(library: Path) -> None:
    app, summary = build_embedded_app(library, Settings(), preload=True)
    assert "4 services (3 loaded)" in summary
    assert sorted(app.state.runtimes.broken) == ["junk", "zbad"]


def test_library_stats_prints_services_tools_by_backend_and_verification(library: Path) -> None:
    result = runner.invoke(cli_app(), ["library", "stats", "--library", str(library), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["path"] == str(library) and stats["services"] == 4
    assert sum(stats["tools_by_backend"].values()) == stats["tools"] > 0
    assert stats["verification"] == {"verified": 0, "failed": 0, "not run": 4}
    assert stats["domains"] == {"crm": 4} and len(stats["skipped"]) == 1
    table = runner.invoke(cli_app(), ["library", "stats", "--library", str(library)])
    assert table.exit_code == 0 and "skipped" in table.output and "junk" in table.output


def test_graph_command_skips_a_folder_that_does_not_load_and_names_it(library: Path) -> None:
    result = runner.invoke(cli_app(), ["graph", "--library", str(library)])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "junk" in result.output.replace("\n", "")


def test_serving_a_pack_goes_on_without_a_folder_that_does_not_load(library: Path) -> None:
    runtimes, _ = load_services(["crm", "zbad"], library)
    assert list(runtimes) == ["crm"]
    with pytest.raises(EntrypointError, match="zbad"):
        load_services(["zbad"], library)
