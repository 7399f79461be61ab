"""`compoworld k8s status|wait` against the real kubernetes client and a fake API server.

The cluster is mocked (there is none here): a small http.server on 127.0.0.1
answers the three list endpoints the way the Kubernetes API does, with the
objects the Helm chart renders plus a status that advances with each poll.
Everything on the client side is real: ``kubernetes.client.ApiClient``,
kubeconfig loading, bearer-token auth, deserialisation, ApiException.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import helm_python
import pytest
import yaml
from kubernetes import client
from typer.testing import CliRunner

from compoworld.deploy.cli import k8s_app
from compoworld.deploy.errors import K8sApiError, K8sConfigError, K8sTimeoutError
from compoworld.deploy.k8s import get_status, load_api_client, wait_until_ready

CHART = Path(__file__).resolve().parents[1] / "helm" / "compoworld"
TOKEN = "test-token"
NAMESPACE = "cw"


@functools.cache
def rendered_json(release: str, values_json: str) -> str:
    with helm_python.Chart.load(CHART) as chart:
        out = chart.render(json.loads(values_json), name=release, namespace=NAMESPACE)
    return json.dumps(
        [d for k, v in sorted(out.items()) if not k.endswith(".txt") for d in yaml.safe_load_all(v) if d]
    )


def rendered(release: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The chart's objects for a release (cached: each test gets fresh copies)."""
    docs: list[dict[str, Any]] = json.loads(rendered_json(release, json.dumps(values, sort_keys=True)))
    return docs


def status_error(code: int, reason: str, message: str) -> dict[str, Any]:
    """The body the API server sends with an error (a meta/v1 Status)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}  # fmt: skip


class FakeCluster:
    """Deployments/Services of two releases; pods become ready after ``ready_after`` deployment lists."""

    def __init__(self, ready_after: int = 0) -> None:
        self.ready_after = ready_after
        self.deployment_lists = 0
        self.requests: list[str] = []
        self.lock = threading.Lock()
        docs = rendered("cw", {"services": ["gmail_api", "google_calendar"]}) + rendered(
            "cwp", {"services": ["alpha", "bravo", "charlie"], "packing": {"servicesPerPod": 2}}
        )
        self.deployments = [d for d in docs if d["kind"] == "Deployment"]
        self.services = [d for d in docs if d["kind"] == "Service"]
        for i, svc in enumerate(self.services):
            if "clusterIP" not in svc["spec"]:
                svc["spec"]["clusterIP"] = f"10.96.0.{10 + i}"

    def ready(self) -> bool:
        return self.ready_after >= 0 and self.deployment_lists > self.ready_after

    def deployment(self, doc: dict[str, Any], index: int) -> dict[str, Any]:
        obj = copy.deepcopy(doc)
        obj["metadata"] |= {"uid": f"uid-{index}", "generation": 2, "resourceVersion": str(100 + index)}
        replicas = obj["spec"]["replicas"]
        if self.ready():
            obj["status"] = {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
                             "readyReplicas": replicas, "availableReplicas": replicas}  # fmt: skip
        else:
            obj["status"] = {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
                             "unavailableReplicas": replicas,
                             "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                                             "message": "Deployment does not have minimum availability."}]}  # fmt: skip
        return obj

    def endpoints(self, svc: dict[str, Any], index: int) -> dict[str, Any]:
        """What the endpoints controller writes: same name and labels as the Service."""
        address = {
            "ip": f"10.244.1.{10 + index}",
            "targetRef": {"kind": "Pod", "name": f"{svc['metadata']['name']}-abc"},
        }
        subset: dict[str, Any] = {"ports": [{"name": "http", "port": 8000, "protocol": "TCP"}]}
        subset["addresses" if self.ready() else "notReadyAddresses"] = [address]
        meta = {k: svc["metadata"][k] for k in ("name", "namespace", "labels")}
        return {"metadata": meta, "subsets": [subset]}

    def answer(self, path: str, query: dict[str, list[str]], auth: str | None) -> tuple[int, dict[str, Any]]:
        if auth != f"Bearer {TOKEN}":
            return 401, status_error(401, "Unauthorized", "Unauthorized")
        parts = path.strip("/").split("/")
        if len(parts) < 4 or parts[-3] != "namespaces":
            return 404, status_error(404, "NotFound", "the server could not find the requested resource")
        namespace, resource = parts[-2], parts[-1]
        group = "apps" if path.startswith("/apis/apps/v1/") else ""
        if namespace == "locked":
            message = (f'{resource}{"." + group if group else ""} is forbidden: User "system:serviceaccount:'
                       f'trainer:default" cannot list resource "{resource}" in API group "{group}" in the '
                       f'namespace "locked"')  # fmt: skip
            return 403, status_error(403, "Forbidden", message)
        if namespace == "no-apps" and group == "apps":
            return 404, status_error(404, "NotFound", "the server could not find the requested resource")
        wanted = dict(p.split("=", 1) for p in query.get("labelSelector", [""])[0].split(",") if p)
        with self.lock:
            if resource == "deployments":
                self.deployment_lists += 1
                items = [self.deployment(d, i) for i, d in enumerate(self.deployments)]
                kind, api_version = "DeploymentList", "apps/v1"
            elif resource == "services":
                items, kind, api_version = copy.deepcopy(self.services), "ServiceList", "v1"
            elif resource == "endpoints":
                items = [self.endpoints(s, i) for i, s in enumerate(self.services)]
                kind, api_version = "EndpointsList", "v1"
            else:
                return 404, status_error(404, "NotFound", "the server could not find the requested resource")
        if namespace != NAMESPACE:
            items = []  # listing an empty or missing namespace is an empty list, as on a real cluster
        items = [o for o in items if wanted.items() <= o["metadata"].get("labels", {}).items()]
        return 200, {
            "kind": kind,
            "apiVersion": api_version,
            "metadata": {"resourceVersion": "1"},
            "items": items,
        }


@pytest.fixture
def cluster() -> Iterator[tuple[FakeCluster, str]]:
    fake = FakeCluster()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            fake.requests.append(self.path)
            code, body = fake.answer(url.path, parse_qs(url.query), self.headers.get("Authorization"))
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def no_proxy_no_cluster_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(var, raising=False)


def api_client(url: str, token: str = TOKEN) -> client.ApiClient:
    configuration = client.Configuration(
        host=url, api_key={"authorization": token}, api_key_prefix={"authorization": "Bearer"}
    )
    return client.ApiClient(configuration)


def kubeconfig(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": url}}],
                "users": [{"name": "trainer", "user": {"token": TOKEN}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "trainer"}}],
                "current-context": "fake",
            }
        )
    )
    return path


def test_status_lists_deployments_addresses_endpoints_and_pack_members(
    cluster: tuple[FakeCluster, str],
) -> None:
    fake, url = cluster
    report = get_status(NAMESPACE, "cwp", api_client(url))
    assert (
        report.ready
        and report.selector == "app.kubernetes.io/part-of=compoworld,app.kubernetes.io/instance=cwp"
    )
    by_name = {w.name: w for w in report.workloads}
    assert list(by_name) == ["cwp-orchestrator", "cwp-pack-0", "cwp-pack-1"]
    assert by_name["cwp-pack-0"].services == ["alpha", "bravo"]
    assert by_name["cwp-pack-1"].services == ["charlie"]
    assert by_name["cwp-pack-0"].component == "pack"
    pack = by_name["cwp-pack-1"]
    assert (pack.desired, pack.ready_replicas, pack.rolled_out) == (1, 1, True)
    assert pack.cluster_ip == "None" and pack.ports == [8000]  # headless
    assert pack.endpoints and pack.endpoints[0].endswith(":8000")
    orch = by_name["cwp-orchestrator"]
    assert orch.cluster_ip is not None and orch.cluster_ip.startswith("10.96.") and orch.services == []
    selectors = {parse_qs(urlparse(r).query)["labelSelector"][0] for r in fake.requests}
    assert selectors == {report.selector}
    assert [urlparse(r).path for r in fake.requests] == [
        "/apis/apps/v1/namespaces/cw/deployments",
        "/api/v1/namespaces/cw/services",
        "/api/v1/namespaces/cw/endpoints",
    ]


def test_status_without_release_covers_every_compoworld_release(cluster: tuple[FakeCluster, str]) -> None:
    _, url = cluster
    report = get_status(NAMESPACE, None, api_client(url))
    names = {w.name for w in report.workloads}
    assert {"cw-svc-gmail-api", "cw-svc-google-calendar", "cw-orchestrator", "cwp-pack-0"} <= names
    assert {s for w in report.workloads for s in w.services} == {
        "gmail_api",
        "google_calendar",
        "alpha",
        "bravo",
        "charlie",
    }


def test_not_ready_deployments_say_what_they_wait_for(cluster: tuple[FakeCluster, str]) -> None:
    fake, url = cluster
    fake.ready_after = -1  # never
    report = get_status(NAMESPACE, "cw", api_client(url))
    assert not report.ready
    gmail = next(w for w in report.workloads if w.name == "cw-svc-gmail-api")
    assert (
        gmail.message == "0/1 replicas available" and gmail.endpoints == [] and gmail.not_ready_endpoints == 1
    )
    assert "0/3 Deployments ready" in report.summary()


def test_wait_returns_once_every_deployment_is_ready(cluster: tuple[FakeCluster, str]) -> None:
    fake, url = cluster
    fake.ready_after = 3
    seen: list[bool] = []
    report = wait_until_ready(
        NAMESPACE, "cw", 10, api_client(url), poll_s=0.01, on_poll=lambda r: seen.append(r.ready)
    )
    assert report.ready and seen == [False, False, False, True]


def test_wait_times_out_with_the_last_report(cluster: tuple[FakeCluster, str]) -> None:
    fake, url = cluster
    fake.ready_after = -1
    with pytest.raises(K8sTimeoutError, match=r"not ready after 0.3s: 0/3 Deployments ready") as info:
        wait_until_ready(NAMESPACE, "cw", 0.3, api_client(url), poll_s=0.05)
    assert len(info.value.report.workloads) == 3 and not info.value.report.ready
    assert fake.deployment_lists >= 3


def test_wait_on_an_empty_namespace_times_out_naming_the_selector(cluster: tuple[FakeCluster, str]) -> None:
    _, url = cluster
    with pytest.raises(
        K8sTimeoutError,
        match=re.escape(
            "no Deployments match 'app.kubernetes.io/part-of=compoworld,app.kubernetes.io/instance=cw' "
            "in namespace 'elsewhere'"
        ),
    ):
        wait_until_ready("elsewhere", "cw", 0.1, api_client(url), poll_s=0.02)


def test_forbidden_is_a_clear_error_and_wait_does_not_retry_it(cluster: tuple[FakeCluster, str]) -> None:
    fake, url = cluster
    with pytest.raises(
        K8sApiError,
        match=r"HTTP 403 deployments.apps is forbidden: .*\(the credentials may not list deployments in namespace 'locked'; grant get/list",
    ) as info:
        get_status("locked", "cw", api_client(url))
    assert info.value.status == 403
    before = len(fake.requests)
    with pytest.raises(K8sApiError, match="HTTP 403"):
        wait_until_ready("locked", "cw", 30, api_client(url), poll_s=0.01)
    assert len(fake.requests) == before + 1


def test_not_found_and_unauthorized_are_clear_errors(cluster: tuple[FakeCluster, str]) -> None:
    _, url = cluster
    with pytest.raises(
        K8sApiError,
        match=r"HTTP 404 the server could not find the requested resource .*wrong cluster or API version",
    ):
        get_status("no-apps", "cw", api_client(url))
    with pytest.raises(K8sApiError, match=r"HTTP 401 .*credentials were rejected"):
        get_status(NAMESPACE, "cw", api_client(url, token="wrong"))


def test_unreachable_api_is_retried_until_the_deadline() -> None:
    dead = api_client("http://127.0.0.1:9")  # discard port: nothing listens
    dead.configuration.retries = 0
    with pytest.raises(K8sApiError, match="unreachable"):
        get_status(NAMESPACE, "cw", dead)
    with pytest.raises(
        K8sTimeoutError, match="last error: listing deployments failed: the Kubernetes API is unreachable"
    ):
        wait_until_ready(NAMESPACE, "cw", 0.2, dead, poll_s=0.05)


def test_no_kubeconfig_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    with pytest.raises(
        K8sConfigError,
        match=r"no usable Kubernetes configuration in .*absent .*point KUBECONFIG or --kubeconfig",
    ):
        get_status(NAMESPACE, "cw")
    with pytest.raises(K8sConfigError):
        wait_until_ready(NAMESPACE, "cw", 1)
    monkeypatch.delenv("KUBECONFIG")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(K8sConfigError, match=re.escape("~/.kube/config")):
        load_api_client()


def test_kubeconfig_file_drives_the_client(tmp_path: Path, cluster: tuple[FakeCluster, str]) -> None:
    _, url = cluster
    report = get_status(NAMESPACE, "cw", load_api_client(kubeconfig(tmp_path, url)))
    assert report.ready and len(report.workloads) == 3


def test_cli_status_prints_a_table_and_json(tmp_path: Path, cluster: tuple[FakeCluster, str]) -> None:
    _, url = cluster
    config = str(kubeconfig(tmp_path, url))
    runner = CliRunner()
    result = runner.invoke(k8s_app(), ["status", "-n", NAMESPACE, "-r", "cwp", "--kubeconfig", config])
    assert result.exit_code == 0, result.output
    assert "cwp-pack-0" in result.output and "alpha, bravo" in result.output and "1/1" in result.output
    result = runner.invoke(
        k8s_app(), ["status", "-n", NAMESPACE, "-r", "cwp", "--kubeconfig", config, "--json"]
    )
    data = json.loads(result.output)
    assert data["ready"] is True and [w["name"] for w in data["workloads"]][1:] == [
        "cwp-pack-0",
        "cwp-pack-1",
    ]


def test_cli_wait_exit_codes(tmp_path: Path, cluster: tuple[FakeCluster, str]) -> None:
    fake, url = cluster
    config = str(kubeconfig(tmp_path, url))
    runner = CliRunner()
    fake.ready_after = 2
    ok = runner.invoke(
        k8s_app(), ["wait", "-n", NAMESPACE, "-r", "cw", "--kubeconfig", config, "--poll", "0.01"]
    )
    assert ok.exit_code == 0 and "3/3 Deployments ready" in ok.output
    fake.ready_after = -1
    late = runner.invoke(
        k8s_app(),
        ["wait", "-n", NAMESPACE, "-r", "cw", "--kubeconfig", config, "--timeout", "0.2", "--poll", "0.05"],
    )
    assert late.exit_code == 1 and "not ready after 0.2s" in late.output and "cw-svc-gmail-api" in late.output
    denied = runner.invoke(k8s_app(), ["wait", "-n", "locked", "--kubeconfig", config])
    assert denied.exit_code == 1 and "HTTP 403" in denied.output


def test_cli_without_kubeconfig_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    result = CliRunner().invoke(k8s_app(), ["status", "-n", NAMESPACE])
    assert result.exit_code == 1 and "no usable Kubernetes configuration" in result.output
    assert "Traceback" not in result.output
