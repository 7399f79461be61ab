"""The Helm chart renders, lints strictly and validates for the starter library and at 2,000 services.

No cluster: the chart is rendered with the Helm v4 SDK (``helm_python``), linted
with ``strict=True``, and every rendered object is validated against the
Kubernetes 1.31 OpenAPI schemas with ``kubernetes-validate --strict``. The tests
then check the objects are the ones the values ask for.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from compoworld.deploy.cli import deploy_app
from compoworld.deploy.helm_values import (
    BEGIN_MARKER,
    END_MARKER,
    render_services_block,
    splice_services_block,
)
from compoworld.deploy.library import scan_library
from compoworld.deploy.naming import k8s_pack_name, k8s_service_name, pack_services
from compoworld.settings import ORCHESTRATOR_LIMITS, Settings

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "helm" / "compoworld"
K8S_VERSION = "1.31.0"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
SERVICE_KINDS = {"service", "pack"}


def render(
    values: dict[str, Any], name: str = "cw", namespace: str = "cw"
) -> tuple[list[dict[str, Any]], str]:
    """Render the chart; return the objects and NOTES.txt."""
    with helm_python.Chart.load(CHART) as chart:
        out = chart.render(values, name=name, namespace=namespace)
    notes = "".join(v for k, v in out.items() if k.endswith("NOTES.txt"))
    docs = [
        doc
        for key, text in sorted(out.items())
        if not key.endswith(".txt")
        for doc in yaml.load_all(text, Loader=yaml.CSafeLoader)
        if doc
    ]
    return docs, notes


def check_objects(docs: list[dict[str, Any]]) -> None:
    """Strict schema validation plus the name/label rules the schemas do not encode."""
    seen: set[tuple[str, str]] = set()
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        meta = doc["metadata"]
        name = meta["name"]
        assert len(name) <= 63 and DNS_LABEL.match(name), f"{doc['kind']} name {name!r}"
        if doc["kind"] == "Service":
            assert DNS_1035.match(name), name
        assert (doc["kind"], name) not in seen, f"duplicate {doc['kind']} {name}"
        seen.add((doc["kind"], name))
        labels = dict(meta.get("labels", {}))
        if doc["kind"] == "Deployment":
            labels |= doc["spec"]["template"]["metadata"]["labels"]
            assert (
                doc["spec"]["selector"]["matchLabels"].items()
                <= doc["spec"]["template"]["metadata"]["labels"].items()
            )
        for key, value in labels.items():
            assert len(value) <= 63 and LABEL_VALUE.match(value), f"label {key}={value!r} on {name}"
        for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"):
            assert key in meta["labels"], f"{name} lacks {key}"


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def service_deployments(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        d
        for d in by_kind(docs, "Deployment")
        if d["metadata"]["labels"]["app.kubernetes.io/component"] in SERVICE_KINDS
    ]


def url_map(docs: list[dict[str, Any]]) -> dict[str, str]:
    (cm,) = by_kind(docs, "ConfigMap")
    urls: dict[str, str] = json.loads(cm["data"]["service-urls.json"])
    return urls


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def fake_names(count: int) -> list[str]:
    """Service names shaped like a real library's: snake_case, some very long."""
    return [
        f"openapi_provider_{i:04d}_with_a_rather_long_descriptive_service_name"
        if i % 9 == 0
        else f"svc_{i:04d}_api"
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def starter() -> tuple[list[dict[str, Any]], str]:
    return render({})


@pytest.fixture(scope="module")
def small() -> tuple[list[dict[str, Any]], str]:
    return render({"services": ["gmail_api", "google_calendar", "stripe"]})


@pytest.fixture(scope="module")
def packed_2000() -> tuple[list[str], list[dict[str, Any]], str]:
    names = fake_names(2000)
    docs, notes = render({"services": names, "packing": {"servicesPerPod": 50}})
    return names, docs, notes


def test_chart_lints_strictly_clean() -> None:
    for values in (None, {"services": fake_names(5), "packing": {"servicesPerPod": 2}}):
        report = helm_python.lint(CHART, values, strict=True, kube_version=f"v{K8S_VERSION}")
        assert report["errors"] == [] and report["messages"] == [], report


def test_chart_metadata_is_v2_with_version_app_version_and_icon() -> None:
    with helm_python.Chart.load(CHART) as chart:
        meta = chart.metadata
    assert meta["apiVersion"] == "v2"
    assert meta["version"] and meta["appVersion"] and meta["icon"]


def test_committed_values_list_the_committed_library() -> None:
    values = (CHART / "values.yaml").read_text()
    names = scan_library(ROOT / "generated_services")
    assert splice_services_block(values, names) == values, (
        "helm/compoworld/values.yaml is stale: run "
        "`compoworld deploy helm-values --library generated_services --out helm/compoworld/values.yaml`"
    )
    assert yaml.safe_load(values)["services"] == names


def test_starter_values_render_valid_objects(starter: tuple[list[dict[str, Any]], str]) -> None:
    docs, notes = starter
    check_objects(docs)
    names = yaml.safe_load((CHART / "values.yaml").read_text())["services"]
    assert len(service_deployments(docs)) == len(names)
    assert sorted(url_map(docs)) == sorted(names)
    assert "port-forward service/cw-orchestrator 8000:8000" in notes


def test_one_deployment_and_service_per_service(small: tuple[list[dict[str, Any]], str]) -> None:
    docs, _ = small
    check_objects(docs)
    deployments = {d["metadata"]["name"]: d for d in service_deployments(docs)}
    services = {s["metadata"]["name"]: s for s in by_kind(docs, "Service")}
    expected = {k8s_service_name("cw", n): n for n in ["gmail_api", "google_calendar", "stripe"]}
    assert set(deployments) == set(expected)
    for name, real in expected.items():
        dep = deployments[name]
        assert container(dep)["args"] == ["serve", real, "--host", "0.0.0.0", "--port", "8000"]
        assert json.loads(dep["metadata"]["annotations"]["compoworld.io/services"]) == [real]
        svc = services[name]
        assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
        assert svc["spec"]["clusterIP"] == "None"  # headless: the orchestrator pins episodes to a replica
    assert url_map(docs) == {
        "gmail_api": "http://cw-svc-gmail-api.cw.svc.cluster.local:8000",
        "google_calendar": "http://cw-svc-google-calendar.cw.svc.cluster.local:8000",
        "stripe": "http://cw-svc-stripe.cw.svc.cluster.local:8000",
    }
    assert not by_kind(docs, "HorizontalPodAutoscaler") and not by_kind(docs, "Ingress")


def test_every_pod_probes_health_and_gets_the_admin_token_secret(
    small: tuple[list[dict[str, Any]], str],
) -> None:
    docs, _ = small
    (secret,) = by_kind(docs, "Secret")
    token = base64.b64decode(secret["data"]["admin-token"]).decode()
    assert len(token) == 48 and token.isalnum()
    for dep in by_kind(docs, "Deployment"):
        c = container(dep)
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            assert c[probe]["httpGet"] == {"path": "/health", "port": "http"}
        env = {e["name"]: e for e in c["env"]}
        ref = env["COMPOWORLD_ADMIN_TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": secret["metadata"]["name"], "key": "admin-token"}
        pod = dep["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["enableServiceLinks"] is False and pod["automountServiceAccountToken"] is False
        assert c["resources"]["requests"] and c["resources"]["limits"]
        assert dep["spec"]["replicas"] == 1


def test_orchestrator_discovers_services_through_the_mounted_url_map(
    small: tuple[list[dict[str, Any]], str],
) -> None:
    docs, _ = small
    (orch,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "cw-orchestrator"]
    (cm,) = by_kind(docs, "ConfigMap")
    c = container(orch)
    assert c["args"][:5] == ["orchestrator", "--host", "0.0.0.0", "--port", "8000"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["COMPOWORLD_SERVICE_URLS_FILE"] == "/etc/compoworld/service-urls.json"
    assert env["COMPOWORLD_RESOLVE_REPLICAS"] == "true"  # headless Services: episodes pinned to pods
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in orch["spec"]["template"]["spec"]["volumes"]}
    assert mounts["service-urls"] == "/etc/compoworld"
    assert volumes["service-urls"]["configMap"]["name"] == cm["metadata"]["name"]
    assert "checksum/service-urls" in orch["spec"]["template"]["metadata"]["annotations"]


def test_network_policy_admits_only_orchestrator_and_trainer_to_service_pods(
    small: tuple[list[dict[str, Any]], str],
) -> None:
    docs, _ = small
    (policy,) = by_kind(docs, "NetworkPolicy")
    selector = policy["spec"]["podSelector"]
    assert selector["matchLabels"] == {
        "app.kubernetes.io/name": "compoworld",
        "app.kubernetes.io/instance": "cw",
    }
    assert selector["matchExpressions"] == [
        {"key": "app.kubernetes.io/component", "operator": "In", "values": ["service", "pack"]}
    ]
    for dep in by_kind(docs, "Deployment"):
        labels = dep["spec"]["template"]["metadata"]["labels"]
        selected = labels.items() >= selector["matchLabels"].items() and labels[
            "app.kubernetes.io/component"
        ] in {
            "service",
            "pack",
        }
        assert selected == (dep["metadata"]["name"] != "cw-orchestrator")
    (rule,) = policy["spec"]["ingress"]
    peers = [p["podSelector"]["matchLabels"] for p in rule["from"]]
    assert peers == [
        {
            "app.kubernetes.io/name": "compoworld",
            "app.kubernetes.io/instance": "cw",
            "app.kubernetes.io/component": "orchestrator",
        },
        {"app.kubernetes.io/component": "trainer"},
    ]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    docs_off, _ = render({"services": ["a"], "networkPolicy": {"enabled": False}})
    assert not by_kind(docs_off, "NetworkPolicy")


def test_packing_makes_ceil_n_over_k_packs_that_serve_each_service_once() -> None:
    names = ["delta", "alpha", "echo", "charlie", "bravo"]
    docs, notes = render({"services": names, "packing": {"servicesPerPod": 2}})
    check_objects(docs)
    packs = service_deployments(docs)
    assert len(packs) == math.ceil(len(names) / 2) == 3
    expected = pack_services(names, 2)
    for i, members in enumerate(expected):
        (dep,) = [d for d in packs if d["metadata"]["name"] == k8s_pack_name("cw", i)]
        assert container(dep)["args"] == ["serve", *members, "--host", "0.0.0.0", "--port", "8000"]
        assert container(dep)["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
        assert dep["metadata"]["labels"]["app.kubernetes.io/component"] == "pack"
    urls = url_map(docs)
    assert sorted(urls) == sorted(names)
    assert urls["alpha"] == "http://cw-pack-0.cw.svc.cluster.local:8000/services/alpha"
    assert urls["echo"] == "http://cw-pack-2.cw.svc.cluster.local:8000/services/echo"
    assert "5 tool services in 3 Deployment(s) (2 services per pack pod)" in notes


def test_autoscaling_renders_hpas_only_when_enabled() -> None:
    values = {
        "services": ["a_svc", "b_svc"],
        "workload": {"autoscaling": {"enabled": True, "maxReplicas": 6}},
        "orchestrator": {"autoscaling": {"enabled": True}},
        "store": {"url": "redis://redis.cw.svc:6379/0"},
    }
    docs, _ = render(values)
    check_objects(docs)
    hpas = {h["metadata"]["name"]: h for h in by_kind(docs, "HorizontalPodAutoscaler")}
    assert set(hpas) == {"cw-svc-a-svc", "cw-svc-b-svc", "cw-orchestrator"}
    for name, hpa in hpas.items():
        assert hpa["apiVersion"] == "autoscaling/v2"
        assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    assert hpas["cw-svc-a-svc"]["spec"]["maxReplicas"] == 6
    for dep in by_kind(docs, "Deployment"):
        assert "replicas" not in dep["spec"]  # the HPA owns the replica count


def test_workload_settings_reach_every_service_pod() -> None:
    values = {
        "services": ["a_svc", "b_svc"],
        "packing": {"servicesPerPod": 2, "resources": {"limits": {"memory": "3Gi"}}},
        "workload": {"replicas": 2, "episodeTtlSeconds": 600, "headless": False,
                     "extraEnv": [{"name": "COMPOWORLD_LLM_MODEL", "value": "m"}]},
        "image": {"repository": "registry.example/compoworld", "tag": "1.2.3"},
    }  # fmt: skip
    docs, _ = render(values)
    check_objects(docs)
    (pack,) = service_deployments(docs)
    c = container(pack)
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["COMPOWORLD_EPISODE_TTL_S"] == "600" and env["COMPOWORLD_LLM_MODEL"] == "m"
    assert c["image"] == "registry.example/compoworld:1.2.3" and pack["spec"]["replicas"] == 2
    assert c["resources"]["limits"] == {"memory": "3Gi"}  # merged over the pack defaults
    (svc,) = [s for s in by_kind(docs, "Service") if s["metadata"]["name"] == "cw-pack-0"]
    assert "clusterIP" not in svc["spec"]


def test_existing_secret_is_used_and_no_secret_is_created() -> None:
    docs, _ = render({"services": ["a_svc"], "adminToken": {"existingSecret": "my-token", "key": "token"}})
    check_objects(docs)
    assert not by_kind(docs, "Secret")
    for dep in by_kind(docs, "Deployment"):
        env = {e["name"]: e for e in container(dep)["env"]}
        assert env["COMPOWORLD_ADMIN_TOKEN"]["valueFrom"]["secretKeyRef"] == {
            "name": "my-token",
            "key": "token",
        }


def test_ingress_routes_to_the_orchestrator_when_enabled() -> None:
    ingress_values = {
        "enabled": True,
        "className": "nginx",
        "host": "cw.example.org",
        "tlsSecretName": "cw-tls",
    }
    docs, notes = render({"services": ["a_svc"], "orchestrator": {"ingress": ingress_values}})
    check_objects(docs)
    (ingress,) = by_kind(docs, "Ingress")
    (rule,) = ingress["spec"]["rules"]
    assert rule["host"] == "cw.example.org"
    assert rule["http"]["paths"][0]["backend"]["service"] == {
        "name": "cw-orchestrator",
        "port": {"name": "http"},
    }
    assert ingress["spec"]["tls"] == [{"hosts": ["cw.example.org"], "secretName": "cw-tls"}]
    assert "https://cw.example.org/" in notes


def test_long_names_are_truncated_with_a_hash_exactly_like_python() -> None:
    release = "a-release-name-that-is-long-enough-to-hurt"
    names = ["x" * 80, "x" * 79, "short_one", "Mixed.Case-Name"]
    docs, _ = render({"services": names}, name=release)
    check_objects(docs)
    got = {d["metadata"]["name"] for d in service_deployments(docs)}
    assert got == {k8s_service_name(release, n) for n in names}
    assert len(got) == len(names)
    packed, _ = render({"services": names, "packing": {"servicesPerPod": 3}}, name=release)
    assert {d["metadata"]["name"] for d in service_deployments(packed)} == {
        k8s_pack_name(release, i) for i in (0, 1)
    }


def test_names_colliding_after_dns_conversion_fail_with_a_clear_message() -> None:
    with pytest.raises(helm_python.HelmRenderError, match=r'both map to the DNS name "a-b"'):
        render({"services": ["a_b", "a-b"]})


def test_bad_values_are_rejected_by_the_schema() -> None:
    with pytest.raises(helm_python.HelmValuesError, match="servicesPerPod"):
        render({"services": ["a"], "packing": {"servicesPerPod": 0}})
    with pytest.raises(helm_python.HelmValuesError, match="additional properties 'service' not allowed"):
        render({"service": ["a"]})


def test_2000_services_packed_render_valid_and_compact(
    packed_2000: tuple[list[str], list[dict[str, Any]], str],
) -> None:
    names, docs, notes = packed_2000
    check_objects(docs)
    packs = service_deployments(docs)
    assert len(packs) == 40
    served = [s for d in packs for s in json.loads(d["metadata"]["annotations"]["compoworld.io/services"])]
    assert sorted(served) == sorted(names)  # every service exactly once
    urls = url_map(docs)
    assert sorted(urls) == sorted(names)
    assert len({u.split("/services/")[0] for u in urls.values()}) == 40
    size = sum(len(yaml.safe_dump(d)) for d in docs)
    assert size < 1_500_000, size  # ~0.6 MB: a library of 2,000 is one reasonable `helm install`
    (cm,) = by_kind(docs, "ConfigMap")
    assert len(cm["data"]["service-urls.json"]) < 1_000_000  # a ConfigMap holds at most 1 MiB
    assert "2000 tool services in 40 Deployment(s)" in notes


def test_rendered_manifests_pass_the_kubernetes_validate_cli(
    tmp_path: Path, small: tuple[list[dict[str, Any]], str]
) -> None:
    docs, _ = small
    path = tmp_path / "rendered.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    cli = [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet", "-k", K8S_VERSION, str(path)]
    assert subprocess.run(cli, capture_output=True, text=True, check=False).returncode == 0
    broken = copy.deepcopy(by_kind(docs, "Deployment")[0])
    broken["spec"]["bogus"] = 1
    path.write_text(yaml.safe_dump(broken))
    result = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "bogus" in result.stdout


@pytest.mark.slow
def test_2000_services_unpacked_render_valid() -> None:
    names = fake_names(2000)
    docs, _ = render({"services": names})
    check_objects(docs)
    assert len(service_deployments(docs)) == 2000
    assert sorted(url_map(docs)) == sorted(names)


def write_library(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "manifest.json").write_text(json.dumps({"name": name, "tools": [], "entities": []}))
    return root


def test_helm_values_command_splices_the_block_and_checks_drift(tmp_path: Path) -> None:
    library = write_library(tmp_path / "lib", ["svc_b", "svc_a"])
    values = tmp_path / "values.yaml"
    values.write_text(
        f"image:\n  tag: x\n{BEGIN_MARKER}\nservices: []\n{END_MARKER}\npacking:\n  servicesPerPod: 3\n"
    )
    runner = CliRunner()
    check = ["helm-values", "--library", str(library), "--out", str(values), "--check"]
    assert runner.invoke(deploy_app(), check).exit_code == 1
    result = runner.invoke(deploy_app(), ["helm-values", "--library", str(library), "--out", str(values)])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(values.read_text())
    assert data == {"image": {"tag": "x"}, "services": ["svc_a", "svc_b"], "packing": {"servicesPerPod": 3}}
    assert runner.invoke(deploy_app(), check).exit_code == 0
    fresh = tmp_path / "new-values.yaml"
    assert (
        runner.invoke(deploy_app(), ["helm-values", "--library", str(library), "--out", str(fresh)]).exit_code
        == 0
    )
    assert fresh.read_text() == render_services_block(["svc_a", "svc_b"])
    docs, _ = render(yaml.safe_load(fresh.read_text()))
    assert sorted(url_map(docs)) == ["svc_a", "svc_b"]


def test_helm_values_refuses_to_overwrite_a_file_without_markers(tmp_path: Path) -> None:
    library = write_library(tmp_path / "lib", ["svc_a"])
    values = tmp_path / "mine.yaml"
    values.write_text("replicas: 3\n")
    result = CliRunner().invoke(
        deploy_app(), ["helm-values", "--library", str(library), "--out", str(values)]
    )
    assert result.exit_code == 1 and "refusing to overwrite" in result.output
    assert values.read_text() == "replicas: 3\n"


def env_of(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (dep,) = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == name]
    return {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}


def test_orchestrator_replicas_need_a_shared_store() -> None:
    for orchestrator in ({"replicas": 2}, {"autoscaling": {"enabled": True}}):
        with pytest.raises(helm_python.HelmRenderError, match="needs a shared episode store"):
            render({"services": ["a_svc"], "orchestrator": orchestrator})
    docs, _ = render({"services": ["a_svc"], "orchestrator": {"replicas": 3},
                      "store": {"url": "redis://redis.cw.svc:6379/0", "leaseSeconds": 10}})  # fmt: skip
    check_objects(docs)
    env = env_of(docs, "cw-orchestrator")
    assert env["COMPOWORLD_STORE_URL"]["value"] == "redis://redis.cw.svc:6379/0"
    assert env["COMPOWORLD_STORE_LEASE_S"]["value"] == "10"
    docs, _ = render(
        {"services": ["a_svc"], "orchestrator": {"replicas": 2}, "store": {"existingSecret": "cw-redis"}}
    )
    check_objects(docs)
    ref = env_of(docs, "cw-orchestrator")["COMPOWORLD_STORE_URL"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "cw-redis", "key": "store-url"}
    one, _ = render({"services": ["a_svc"]})  # the default: one replica, in-memory store
    assert "COMPOWORLD_STORE_URL" not in env_of(one, "cw-orchestrator")
    with pytest.raises(helm_python.HelmValuesError, match="store"):
        render({"services": ["a_svc"], "store": {"url": "http://not-redis"}})


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _changed(name: str) -> int | float:
    """A valid value of the setting ``name`` other than its default (ints stay whole numbers)."""
    default = Settings.model_fields[name].default
    return default + 1 if isinstance(default, int) else default / 2


def test_every_orchestrator_limit_is_a_chart_value_that_reaches_the_orchestrator_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = {_camel(n): n for n in ORCHESTRATOR_LIMITS}
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert set(values["orchestrator"]["limits"]) == set(keys)
    assert all(v == "" for v in values["orchestrator"]["limits"].values())  # the defaults: no env at all
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert set(schema["properties"]["orchestrator"]["properties"]["limits"]["properties"]) == set(keys)
    plain = env_of(render({"services": ["a_svc"]})[0], "cw-orchestrator")
    assert not {f"COMPOWORLD_{n.upper()}" for n in ORCHESTRATOR_LIMITS} & set(plain)
    chosen = {n: _changed(n) for n in ORCHESTRATOR_LIMITS}
    limits = {key: chosen[name] for key, name in keys.items()}
    store = {"url": "redis://redis.cw.svc:6379/0", "leaseSeconds": 45}
    docs, _ = render({"services": ["a_svc"], "orchestrator": {"limits": limits}, "store": store})
    check_objects(docs)
    env = {k: e["value"] for k, e in env_of(docs, "cw-orchestrator").items() if "value" in e}
    for name in ORCHESTRATOR_LIMITS:
        assert f"COMPOWORLD_{name.upper()}" in env, name
    assert env["COMPOWORLD_MAX_TRAJECTORY_BYTES"] == str(chosen["max_trajectory_bytes"])  # not 3.3e+07
    for key, value in env.items():  # the orchestrator process reads them as its settings
        monkeypatch.setenv(key, value)
    read = Settings()
    assert {n: getattr(read, n) for n in ORCHESTRATOR_LIMITS} == chosen
    assert read.store_lease_s == 45
    zero, _ = render({"services": ["a_svc"], "orchestrator": {"limits": {"groupOpenDeadlineS": 0}}})
    assert env_of(zero, "cw-orchestrator")["COMPOWORLD_GROUP_OPEN_DEADLINE_S"]["value"] == "0"  # 0: off


@pytest.mark.parametrize(
    "limits", [{"maxLive": 0}, {"maxWallS": 1e9}, {"maxJsonDepth": "deep"}, {"maxLiv": 5}], ids=str
)
def test_a_bad_orchestrator_limit_is_refused_by_the_schema(limits: dict[str, Any]) -> None:
    with pytest.raises(helm_python.HelmValuesError):
        render({"services": ["a_svc"], "orchestrator": {"limits": limits}})


def test_service_pod_limits_reach_every_service_pod_and_share_the_orchestrator_s_edge_limits() -> None:
    def pod_env(values: dict[str, Any]) -> list[dict[str, str]]:
        docs, _ = render(
            {"services": ["a_svc", "b_svc", "c_svc"], "packing": {"servicesPerPod": 2}, **values}
        )
        check_objects(docs)
        deps = service_deployments(docs)
        assert len(deps) == 2
        return [{e["name"]: e["value"] for e in container(d)["env"] if "value" in e} for d in deps]

    names = ("COMPOWORLD_MAX_EPISODES", "COMPOWORLD_MAX_PAYLOAD_BYTES", "COMPOWORLD_MAX_JSON_DEPTH")
    assert all(not set(names) & set(env) for env in pod_env({}))  # defaults: nothing set
    orchestrator = {"limits": {"maxPayloadBytes": 1048576, "maxJsonDepth": 32, "maxLive": 9}}
    for env in pod_env({"orchestrator": orchestrator, "workload": {"limits": {"maxEpisodes": 33554432}}}):
        assert env["COMPOWORLD_MAX_EPISODES"] == "33554432"  # a whole number, no exponent
        assert env["COMPOWORLD_MAX_PAYLOAD_BYTES"] == "1048576" and env["COMPOWORLD_MAX_JSON_DEPTH"] == "32"
        assert "COMPOWORLD_MAX_LIVE" not in env  # the orchestrator's own limits stay there
    own = {"limits": {"maxPayloadBytes": 2097152}}
    for env in pod_env({"orchestrator": orchestrator, "workload": own}):
        assert env["COMPOWORLD_MAX_PAYLOAD_BYTES"] == "2097152" and env["COMPOWORLD_MAX_JSON_DEPTH"] == "32"
    with pytest.raises(helm_python.HelmValuesError):
        render({"services": ["a_svc"], "workload": {"limits": {"maxLive": 5}}})
