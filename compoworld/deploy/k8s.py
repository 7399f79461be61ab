"""What a CompoWorld Helm release is running on a cluster, and waiting until it is ready.

Reads Deployments, Services and Endpoints through the official ``kubernetes``
client, selected by the chart's labels (``app.kubernetes.io/part-of=compoworld``
and, for one release, ``app.kubernetes.io/instance=<release>``). A Deployment's
Service and Endpoints share its name; the services a Deployment serves are in its
``compoworld.io/services`` annotation (one name, or a pack's names).

The trainer calls :func:`wait_until_ready` before it starts episodes. An
``api_client`` can be passed in (tests point one at a local fake API server);
otherwise the kubeconfig or in-cluster service account is used, never the
client library's global default configuration.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from pydantic import BaseModel, Field, computed_field
from urllib3.exceptions import HTTPError as Urllib3Error

from compoworld.deploy.errors import K8sApiError, K8sConfigError, K8sTimeoutError

__all__ = [
    "SERVICES_ANNOTATION",
    "StatusReport",
    "WorkloadStatus",
    "get_status",
    "load_api_client",
    "release_selector",
    "wait_until_ready",
]

SERVICES_ANNOTATION = "compoworld.io/services"
_REQUEST_TIMEOUT_S = 15.0


class WorkloadStatus(BaseModel):
    """One Deployment of the release, its replicas and where it is reachable."""

    name: str = Field(description="Deployment (and Service) name.")
    component: str = Field(description="orchestrator | service | pack (label app.kubernetes.io/component).")
    services: list[str] = Field(
        default_factory=list, description="Real names of the tool services it serves."
    )
    desired: int = Field(description="spec.replicas.")
    ready_replicas: int = Field(description="status.readyReplicas.")
    updated_replicas: int = Field(description="status.updatedReplicas.")
    available_replicas: int = Field(description="status.availableReplicas.")
    rolled_out: bool = Field(description="Every desired replica runs the current spec and is available.")
    message: str = Field(default="", description="Why it is not rolled out yet; empty when it is.")
    cluster_ip: str | None = Field(
        default=None, description="Service ClusterIP ('None' for a headless Service)."
    )
    ports: list[int] = Field(default_factory=list, description="Service ports.")
    endpoints: list[str] = Field(default_factory=list, description="Ready endpoint addresses, 'ip:port'.")
    not_ready_endpoints: int = Field(default=0, description="Endpoint addresses not ready yet.")


class StatusReport(BaseModel):
    """Every Deployment the selector matched, sorted by component then name."""

    namespace: str = Field(description="Namespace that was read.")
    release: str | None = Field(
        default=None, description="Helm release, or None for every CompoWorld release."
    )
    selector: str = Field(description="Label selector used.")
    workloads: list[WorkloadStatus] = Field(default_factory=list, description="One entry per Deployment.")

    @computed_field(description="At least one Deployment, and all rolled out.")  # type: ignore[prop-decorator]
    @property
    def ready(self) -> bool:
        return bool(self.workloads) and all(w.rolled_out for w in self.workloads)

    def summary(self) -> str:
        """One line: how many Deployments are ready, and what the first laggards wait for."""
        if not self.workloads:
            return f"no Deployments match {self.selector!r} in namespace {self.namespace!r}"
        waiting = [w for w in self.workloads if not w.rolled_out]
        head = f"{len(self.workloads) - len(waiting)}/{len(self.workloads)} Deployments ready"
        if not waiting:
            return head
        detail = "; ".join(f"{w.name}: {w.message}" for w in waiting[:3])
        more = f" (+{len(waiting) - 3} more)" if len(waiting) > 3 else ""
        return f"{head}; waiting for {detail}{more}"


def release_selector(release: str | None) -> str:
    """Label selector of one release's objects (or of every CompoWorld release)."""
    selector = "app.kubernetes.io/part-of=compoworld"
    return f"{selector},app.kubernetes.io/instance={release}" if release else selector


def load_api_client(kubeconfig: str | Path | None = None, context: str | None = None) -> client.ApiClient:
    """An ApiClient from ``kubeconfig`` (or $KUBECONFIG / ~/.kube/config), else in-cluster config.

    Inside a pod without an explicit kubeconfig, the service account is used.
    """
    explicit = kubeconfig is not None or bool(os.environ.get("KUBECONFIG"))
    if not explicit and os.environ.get("KUBERNETES_SERVICE_HOST"):
        configuration = client.Configuration()
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise K8sConfigError(f"in-cluster Kubernetes configuration is unusable: {exc}") from exc
        return client.ApiClient(configuration)
    path = str(kubeconfig) if kubeconfig is not None else os.environ.get("KUBECONFIG", "~/.kube/config")
    try:
        return config.new_client_from_config(config_file=path, context=context)
    except (ConfigException, OSError) as exc:
        raise K8sConfigError(
            f"no usable Kubernetes configuration in {path} ({exc}); point KUBECONFIG or --kubeconfig "
            "at a kubeconfig file, or run inside a cluster with a service account"
        ) from exc


def _api_error(exc: ApiException, what: str, namespace: str) -> K8sApiError:
    message = exc.reason or ""
    if exc.body:
        try:
            message = json.loads(exc.body).get("message", message)
        except (ValueError, AttributeError):
            message = str(exc.body)[:300]
    hint = {
        401: "the credentials were rejected; refresh your kubeconfig",
        403: f"the credentials may not list {what} in namespace {namespace!r}; "
        "grant get/list on deployments, services and endpoints (RBAC)",
        404: "the API server does not serve this resource (wrong cluster or API version?)",
    }.get(exc.status or 0, "the Kubernetes API refused the request")
    return K8sApiError(f"listing {what} failed: HTTP {exc.status} {message} ({hint})", status=exc.status)


def _list(call: Callable[..., Any], what: str, namespace: str, selector: str) -> list[Any]:
    try:
        result = call(namespace, label_selector=selector, _request_timeout=_REQUEST_TIMEOUT_S)
    except ApiException as exc:
        raise _api_error(exc, what, namespace) from exc
    except Urllib3Error as exc:
        raise K8sApiError(f"listing {what} failed: the Kubernetes API is unreachable ({exc})") from exc
    return list(result.items or [])


def _rollout(dep: Any) -> tuple[bool, str]:
    """kubectl rollout status' verdict for one Deployment."""
    spec, status, meta = dep.spec, dep.status, dep.metadata
    desired = 1 if spec.replicas is None else spec.replicas
    if status is None:
        return False, "no status yet"
    if (status.observed_generation or 0) < (meta.generation or 0):
        return False, "the controller has not seen the latest spec yet"
    updated = status.updated_replicas or 0
    if updated < desired:
        return False, f"{updated}/{desired} replicas updated"
    if (status.replicas or 0) > updated:
        return False, f"{(status.replicas or 0) - updated} old replicas terminating"
    available = status.available_replicas or 0
    if available < updated:
        for cond in status.conditions or []:
            if cond.type == "Progressing" and cond.reason == "ProgressDeadlineExceeded":
                return False, f"{available}/{desired} available; progress deadline exceeded: {cond.message}"
        return False, f"{available}/{desired} replicas available"
    return True, ""


def _annotated_services(meta: Any) -> list[str]:
    raw = (meta.annotations or {}).get(SERVICES_ANNOTATION)
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return [raw]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _endpoint_addresses(endpoints: Any) -> tuple[list[str], int]:
    ready: list[str] = []
    not_ready = 0
    for subset in (endpoints.subsets or []) if endpoints is not None else []:
        ports = [p.port for p in subset.ports or []] or [None]
        ready.extend(f"{a.ip}:{p}" if p is not None else a.ip for a in subset.addresses or [] for p in ports)
        not_ready += len(subset.not_ready_addresses or [])
    return sorted(ready), not_ready


def get_status(
    namespace: str, release: str | None = None, api_client: client.ApiClient | None = None
) -> StatusReport:
    """Read the release's Deployments, their Services and Endpoints once."""
    api = api_client if api_client is not None else load_api_client()
    selector = release_selector(release)
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    deployments = _list(apps.list_namespaced_deployment, "deployments", namespace, selector)
    services = {
        s.metadata.name: s for s in _list(core.list_namespaced_service, "services", namespace, selector)
    }
    endpoints = {
        e.metadata.name: e for e in _list(core.list_namespaced_endpoints, "endpoints", namespace, selector)
    }
    workloads = []
    for dep in deployments:
        name = dep.metadata.name
        rolled_out, message = _rollout(dep)
        svc = services.get(name)
        ready_eps, not_ready = _endpoint_addresses(endpoints.get(name))
        status = dep.status
        workloads.append(
            WorkloadStatus(
                name=name,
                component=(dep.metadata.labels or {}).get("app.kubernetes.io/component", ""),
                services=_annotated_services(dep.metadata),
                desired=1 if dep.spec.replicas is None else dep.spec.replicas,
                ready_replicas=(status.ready_replicas or 0) if status else 0,
                updated_replicas=(status.updated_replicas or 0) if status else 0,
                available_replicas=(status.available_replicas or 0) if status else 0,
                rolled_out=rolled_out,
                message=message,
                cluster_ip=svc.spec.cluster_ip if svc is not None else None,
                ports=[p.port for p in (svc.spec.ports or [])] if svc is not None else [],
                endpoints=ready_eps,
                not_ready_endpoints=not_ready,
            )
        )
    order = {"orchestrator": 0, "service": 1, "pack": 2}
    workloads.sort(key=lambda w: (order.get(w.component, 3), w.name))
    return StatusReport(namespace=namespace, release=release, selector=selector, workloads=workloads)


def wait_until_ready(
    namespace: str,
    release: str | None,
    timeout_s: float,
    api_client: client.ApiClient | None = None,
    *,
    poll_s: float = 2.0,
    on_poll: Callable[[StatusReport], None] | None = None,
) -> StatusReport:
    """Poll until every Deployment of the release is rolled out; return the ready report.

    Raises :class:`K8sTimeoutError` (with the last report) after ``timeout_s``.
    Access errors (401/403/404) raise :class:`K8sApiError` at once; an unreachable
    API or a 5xx is retried until the deadline.
    """
    api = api_client if api_client is not None else load_api_client()
    deadline = time.monotonic() + timeout_s
    last_error: K8sApiError | None = None
    report = StatusReport(namespace=namespace, release=release, selector=release_selector(release))
    while True:
        try:
            report = get_status(namespace, release, api)
            last_error = None
        except K8sApiError as exc:
            if exc.status is not None and 400 <= exc.status < 500 and exc.status != 429:
                raise
            last_error = exc
        else:
            if on_poll is not None:
                on_poll(report)
            if report.ready:
                return report
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            why = f"last error: {last_error}" if last_error is not None else report.summary()
            raise K8sTimeoutError(
                f"release {release or '(all)'} in namespace {namespace!r} not ready after {timeout_s:g}s: {why}",
                report,
            )
        time.sleep(min(poll_s, remaining))
