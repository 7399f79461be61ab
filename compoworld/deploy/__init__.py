"""Deployment layer: one image, docker-compose.yml and Helm values generated from the library,
and the status of a release on Kubernetes.

Names are imported lazily: the container health check (``python -m
compoworld.deploy.healthcheck``) runs every few seconds and must not pay for
pydantic or the Kubernetes client.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DeployError",
    "K8sApiError",
    "K8sConfigError",
    "K8sError",
    "K8sTimeoutError",
    "LibraryError",
    "StatusReport",
    "WorkloadStatus",
    "compose_service_urls",
    "dns_segment",
    "fit_name",
    "get_status",
    "k8s_pack_name",
    "k8s_service_name",
    "pack_services",
    "render_compose",
    "render_services_block",
    "scan_library",
    "splice_services_block",
    "wait_until_ready",
]

_HOME = {
    "DeployError": "errors",
    "K8sApiError": "errors",
    "K8sConfigError": "errors",
    "K8sError": "errors",
    "K8sTimeoutError": "errors",
    "LibraryError": "errors",
    "StatusReport": "k8s",
    "WorkloadStatus": "k8s",
    "get_status": "k8s",
    "wait_until_ready": "k8s",
    "compose_service_urls": "compose",
    "render_compose": "compose",
    "dns_segment": "naming",
    "fit_name": "naming",
    "k8s_pack_name": "naming",
    "k8s_service_name": "naming",
    "pack_services": "naming",
    "render_services_block": "helm_values",
    "splice_services_block": "helm_values",
    "scan_library": "library",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
