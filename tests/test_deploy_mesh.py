"""The deployment files' command lines and URL maps drive the real CLI: a mesh without containers.

No Docker engine or cluster here, so each container is played by a local process
started with exactly the arguments the generated docker-compose.yml (one service
per container) and the Helm chart (a pack pod) give it, bound to 127.0.0.1 instead
of 0.0.0.0. The orchestrator reads a URL map in the shapes both files produce
(``http://<svc>:8000`` and ``http://<pack>:8000/services/<svc>``, hosts rewritten to
the local ports); the container health check is the one the image runs. An agent
then opens an episode and calls a tool of each service through the orchestrator.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python
import httpx
import pytest
import yaml

from compoworld.deploy.compose import compose_service_key, render_compose
from tests.runtime_fixture import write_crm_service

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ["crm", "crm_two"]
TOKEN = "mesh-test-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def localise(argv: list[str], port: int) -> list[str]:
    """A container's argv with its bind address moved from 0.0.0.0:8000 to 127.0.0.1:<port>."""
    out = list(argv)
    assert out[out.index("--host") + 1] == "0.0.0.0" and out[out.index("--port") + 1] == "8000"
    out[out.index("--host") + 1] = "127.0.0.1"
    out[out.index("--port") + 1] = str(port)
    return out


def make_library(root: Path) -> Path:
    write_crm_service(root)
    manifest = json.loads((root / "crm" / "manifest.json").read_text())
    (root / "crm_two").mkdir()
    for item in (root / "crm").iterdir():
        (root / "crm_two" / item.name).write_bytes(item.read_bytes())
    (root / "crm_two" / "manifest.json").write_text(json.dumps(manifest | {"name": "crm_two"}))
    return root


def chart_pack(values: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """argv of the single pack pod and the URL map the chart renders for it."""
    with helm_python.Chart.load(ROOT / "helm" / "compoworld") as chart:
        out = chart.render(values, name="cw", namespace="cw")
    docs = [d for k, v in out.items() if not k.endswith(".txt") for d in yaml.safe_load_all(v) if d]
    (pack,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "cw-pack-0"]
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap"]
    return pack["spec"]["template"]["spec"]["containers"][0]["args"], json.loads(
        cm["data"]["service-urls.json"]
    )


def healthy(url: str) -> bool:
    check = [sys.executable, "-m", "compoworld.deploy.healthcheck", url]
    return subprocess.run(check, capture_output=True, check=False, timeout=30).returncode == 0


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the orchestrator and the pack process, once every process is healthy."""
    tmp = tmp_path_factory.mktemp("mesh")
    library = make_library(tmp / "lib")
    compose = yaml.safe_load(render_compose(SERVICES))
    pack_args, chart_urls = chart_pack({"services": SERVICES, "packing": {"servicesPerPod": 2}})
    env = os.environ | {"COMPOWORLD_LIBRARY": str(library), "COMPOWORLD_ADMIN_TOKEN": TOKEN}
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], extra: dict[str, str] | None = None) -> None:
        cmd = [sys.executable, "-m", "compoworld.cli", *argv]
        procs.append(subprocess.Popen(cmd, env=env | (extra or {}), cwd=ROOT, stdout=subprocess.DEVNULL))

    try:
        crm_port, pack_port, orch_port = free_port(), free_port(), free_port()
        start(localise(compose["services"][compose_service_key("crm")]["command"], crm_port))
        start(localise(pack_args, pack_port))
        compose_urls = json.loads(compose["configs"]["service-urls"]["content"])
        urls = {
            "crm": compose_urls["crm"].replace("http://crm:8000", f"http://127.0.0.1:{crm_port}"),
            "crm_two": chart_urls["crm_two"].replace(
                "http://cw-pack-0.cw.svc.cluster.local:8000", f"http://127.0.0.1:{pack_port}"
            ),
        }
        assert urls["crm_two"].endswith("/services/crm_two")
        (tmp / "service-urls.json").write_text(json.dumps(urls))
        orch_cmd = compose["services"]["orchestrator"]["command"]
        start(localise(orch_cmd, orch_port), {"COMPOWORLD_SERVICE_URLS_FILE": str(tmp / "service-urls.json")})
        checks = [f"http://127.0.0.1:{p}/health" for p in (crm_port, pack_port, orch_port)]
        deadline = time.monotonic() + 240  # three Python processes start at once: slow on a loaded machine
        while not all(healthy(u) for u in checks):
            assert all(p.poll() is None for p in procs), "a mesh process exited"
            assert time.monotonic() < deadline, "mesh did not become healthy in 240 s"
            time.sleep(0.3)
        yield {"orchestrator": f"http://127.0.0.1:{orch_port}", "pack": f"http://127.0.0.1:{pack_port}"}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def test_orchestrator_discovers_a_service_container_and_a_pack_member(mesh: dict[str, str]) -> None:
    with httpx.Client(base_url=mesh["orchestrator"]) as orch:
        assert orch.get("/health").json()["services"] == len(SERVICES)
        listed = {s["name"] for s in orch.get("/services").json()}
    assert listed == set(SERVICES)
    for path in ("/health", "/services/crm/health", "/services/crm_two/health"):
        assert healthy(mesh["pack"] + path), path


def test_an_agent_calls_tools_of_a_single_service_container_and_a_pack(mesh: dict[str, str]) -> None:
    task = {"id": "mesh-1", "instruction": "List the contacts.", "services": SERVICES, "today": "2026-01-15",
            "gold_calls": [], "rubric": []}  # fmt: skip
    with httpx.Client(base_url=mesh["orchestrator"], timeout=30) as orch:
        opened = orch.post("/episodes", json={"task": task})
        assert opened.status_code == 201, opened.text
        episode = opened.json()
        names = {t["function"]["name"] for t in episode["tools"]}
        assert {"crm__listContacts", "crm_two__listContacts"} <= names
        calls = [
            {"id": f"c{i}", "name": f"{svc}__listContacts", "arguments": {}} for i, svc in enumerate(SERVICES)
        ]
        step = orch.post(f"/episodes/{episode['episode_id']}/step", json={"tool_calls": calls})
        assert step.status_code == 200, step.text
        results = [json.loads(r["content"]) for r in step.json()["results"]]
        assert [r["success"] for r in results] == [True, True], results
        assert results[0]["data"] == results[1]["data"]  # same seed, served by a container and by a pack
        finished = orch.post(f"/episodes/{episode['episode_id']}/finish", json={"answer": "done"})
        assert finished.status_code == 200, finished.text
