"""``compoworld deploy ...`` and ``compoworld k8s ...``: typer apps mounted by ``compoworld/cli.py``.

``deploy compose`` / ``deploy helm-values`` regenerate deployment files from the
library (``--check`` only compares, for CI). ``k8s status`` / ``k8s wait`` read a
Helm release on a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from compoworld.commands import command_group
from compoworld.deploy.compose import render_compose
from compoworld.deploy.errors import K8sTimeoutError
from compoworld.deploy.helm_values import splice_services_block
from compoworld.deploy.library import scan_library
from compoworld.errors import CompoWorldError

if TYPE_CHECKING:  # the kubernetes client is imported only by the k8s commands (it is slow to load)
    from kubernetes.client import ApiClient

    from compoworld.deploy.k8s import StatusReport

__all__ = ["deploy_app", "k8s_app"]


LibraryOpt = Annotated[
    Path | None,
    typer.Option(
        "--library",
        help="Service library, a folder of <svc>/manifest.json (default: COMPOWORLD_LIBRARY, else the starter set).",
        file_okay=False,
    ),
]
CheckOpt = Annotated[
    bool,
    typer.Option("--check", help="Write nothing; exit 1 if the file differs from what would be written."),
]
NamespaceOpt = Annotated[str, typer.Option("--namespace", "-n", help="Kubernetes namespace of the release.")]
ReleaseOpt = Annotated[
    str | None, typer.Option("--release", "-r", help="Helm release name (default: every CompoWorld release).")
]
KubeconfigOpt = Annotated[
    Path | None, typer.Option("--kubeconfig", help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config).")
]
ContextOpt = Annotated[str | None, typer.Option("--context", help="Kubeconfig context to use.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(1)


def _library(library: Path | None) -> Path:
    from compoworld.settings import Settings

    return library if library is not None else Settings().library


def _write_or_check(out: Path, text: str, check: bool) -> None:
    current = out.read_text(encoding="utf-8") if out.exists() else None
    if check:
        if current != text:
            raise _fail(
                f"{out} is out of date with the library; regenerate it (same command without --check)"
            )
        typer.echo(f"{out} is up to date")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}")


def compose_cmd(
    library: LibraryOpt = None,
    out: Annotated[Path, typer.Option("--out", help="Compose file to write.")] = Path("docker-compose.yml"),
    check: CheckOpt = False,
) -> None:
    """docker-compose.yml: the orchestrator plus one container per service of the library."""
    try:
        text = render_compose(scan_library(_library(library)))
    except CompoWorldError as exc:  # a DeployError or an unusable library
        raise _fail(str(exc)) from exc
    _write_or_check(out, text, check)


def helm_values_cmd(
    library: LibraryOpt = None,
    out: Annotated[
        Path,
        typer.Option("--out", help="Values file: its marked services block is replaced, or it is created."),
    ] = Path("helm/compoworld/values.yaml"),
    check: CheckOpt = False,
) -> None:
    """The Helm chart's `services:` list for the library."""
    try:
        names = scan_library(_library(library))
        current = out.read_text(encoding="utf-8") if out.exists() else None
        text = splice_services_block(current, names)
    except (CompoWorldError, ValueError) as exc:
        raise _fail(f"{out}: {exc}" if isinstance(exc, ValueError) else str(exc)) from exc
    _write_or_check(out, text, check)


def _report_table(report: StatusReport) -> Table:
    title = f"{report.release or 'all releases'} in {report.namespace}: " + (
        "ready" if report.ready else report.summary()
    )
    table = Table(title=title, title_justify="left")
    for column in ("DEPLOYMENT", "KIND", "READY", "ADDRESS", "ENDPOINTS", "SERVICES"):
        table.add_column(column, overflow="fold")
    for w in report.workloads:
        ready = f"{w.ready_replicas}/{w.desired}" + ("" if w.rolled_out else f" ({w.message})")
        ports = ",".join(str(p) for p in w.ports)
        address = f"{w.cluster_ip}:{ports}" if w.cluster_ip else "-"
        endpoints = ", ".join(w.endpoints) or "-"
        if w.not_ready_endpoints:
            endpoints += f" (+{w.not_ready_endpoints} not ready)"
        table.add_row(w.name, w.component, ready, address, endpoints, ", ".join(w.services) or "-")
    return table


def _client(kubeconfig: Path | None, context: str | None) -> ApiClient:
    from compoworld.deploy.k8s import load_api_client

    return load_api_client(kubeconfig, context)


def status_cmd(
    namespace: NamespaceOpt,
    release: ReleaseOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the release's Deployments: ready/desired replicas, address, endpoints, services served."""
    from compoworld.deploy.k8s import get_status

    try:
        report = get_status(namespace, release, _client(kubeconfig, context))
    except CompoWorldError as exc:  # a DeployError or an unusable library
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        Console(width=200).print(_report_table(report))


def wait_cmd(
    namespace: NamespaceOpt,
    release: ReleaseOpt = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait before failing.", min=0)
    ] = 600.0,
    poll: Annotated[float, typer.Option("--poll", help="Seconds between checks.", min=0.01)] = 2.0,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Block until every Deployment of the release is ready; exit 1 on timeout."""
    from compoworld.deploy.k8s import wait_until_ready

    try:
        report = wait_until_ready(namespace, release, timeout, _client(kubeconfig, context), poll_s=poll)
    except K8sTimeoutError as exc:
        if not as_json:
            Console(width=200).print(_report_table(exc.report))
        raise _fail(str(exc)) from exc
    except CompoWorldError as exc:  # a DeployError or an unusable library
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(report.summary())


@command_group
def deploy_app() -> typer.Typer:
    """A fresh ``deploy_app`` Typer app (built per ``cli_app()``, never shared)."""
    app = typer.Typer(
        name="deploy",
        help="Generate deployment files (docker-compose.yml, Helm values) from the library.",
        no_args_is_help=True,
    )
    app.command("compose")(compose_cmd)
    app.command("helm-values")(helm_values_cmd)
    return app


@command_group
def k8s_app() -> typer.Typer:
    """A fresh ``k8s_app`` Typer app (built per ``cli_app()``, never shared)."""
    app = typer.Typer(
        name="k8s", help="Inspect and wait for a CompoWorld Helm release.", no_args_is_help=True
    )
    app.command("status")(status_cmd)
    app.command("wait")(wait_cmd)
    return app
