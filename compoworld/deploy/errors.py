"""Errors raised by the deployment layer.

Infrastructure failures are exceptions with a message a person can act on (the whole tree is
drawn in ``compoworld.errors``; an unusable library raises its ``LibraryError``)::

    DeployError               (a compoworld.errors.CompoWorldError)
    └── K8sError              talking to a cluster failed
        ├── K8sConfigError    no kubeconfig / in-cluster configuration to use
        ├── K8sApiError       the API answered with an error (403, 404, ...) or could not be reached
        └── K8sTimeoutError   ``wait`` gave up; ``.report`` holds the last status seen
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compoworld.errors import CompoWorldError, LibraryError

if TYPE_CHECKING:
    from compoworld.deploy.k8s import StatusReport

__all__ = [
    "DeployError",
    "K8sApiError",
    "K8sConfigError",
    "K8sError",
    "K8sTimeoutError",
    "LibraryError",
]


class DeployError(CompoWorldError):
    """Base of every deployment-layer error."""


class K8sError(DeployError):
    """A Kubernetes operation failed."""


class K8sConfigError(K8sError):
    """No usable Kubernetes client configuration was found."""


class K8sApiError(K8sError):
    """The Kubernetes API refused a request or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class K8sTimeoutError(K8sError):
    """The release did not become ready in time."""

    def __init__(self, message: str, report: StatusReport) -> None:
        super().__init__(message)
        self.report = report
