"""What a build reports: per service built, per document (built, split, skipped, failed, and why).

A library's ``build-report.json`` depends only on the library (no times, no absolute paths,
sorted), so a build that was killed and resumed reports exactly what an uninterrupted one does.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["BuildReport", "DocumentOutcome", "DocumentStatus", "ServiceBuildResult", "SpecFailure"]

DocumentStatus = Literal["built", "split", "skipped", "failed"]


class ServiceBuildResult(BaseModel):
    """What building one service produced."""

    name: str = Field(description="Service slug (folder name).")
    spec_path: str = Field(description="The input document (relative to the build's input root in a batch).")
    folder: str = Field(default="", description="The generated service folder.")
    source_kind: str = Field(default="", description="openapi3 | swagger2 | mcp | functions.")
    title: str = Field(default="", description="The service's title.")
    domain: str = Field(default="general", description="The service's domain label.")
    description: str = Field(default="", description="What the service is for (first 300 characters).")
    part: str | None = Field(default=None, description="The part of a split document it was built from.")
    tools: int = Field(default=0, description="Number of tools.")
    implemented: int = Field(default=0, description="Tools served by CRUD on typed state.")
    implemented_share: float = Field(
        default=0.0, description="implemented / tools (0 when there are no tools)."
    )
    actions: int = Field(default=0, description="Tools served as state transitions on typed state.")
    stateful_share: float = Field(default=0.0, description="(implemented + actions) / tools.")
    entities: int = Field(default=0, description="Typed entities.")
    rows: int = Field(default=0, description="Seed rows over all entities.")
    verified: bool | None = Field(
        default=None, description="Whether verification passed; None when it did not run."
    )
    switched_to_simulated: dict[str, str] = Field(
        default_factory=dict, description="Tools verification switched to simulated, with the reason."
    )
    failed_checks: dict[str, str] = Field(
        default_factory=dict,
        description="Tools whose checks still fail as served (all simulated, the failure their reason).",
    )
    defects: list[str] = Field(
        default_factory=list, description="Operations left out as defective ('file#pointer: message')."
    )
    errors: list[str] = Field(default_factory=list, description="Problems met (verifier crashes...).")
    warnings: list[str] = Field(default_factory=list, description="Non-fatal ingestion warnings.")
    tool_signature: str = Field(default="", description="Identity of the tool set (de-duplication).")


class SpecFailure(BaseModel):
    """A document (or part of one) that could not be built."""

    spec_path: str = Field(description="The input document (with '#part' for a part of a split one).")
    error: str = Field(description="The SpecError (file#pointer: message) or other failure.")


class DocumentOutcome(BaseModel):
    """What happened to one input document, with the reason."""

    source: str = Field(description="The document, relative to the build's input root.")
    status: DocumentStatus = Field(description="built | split | skipped | failed.")
    reason: str = Field(default="", description="Why it was skipped, failed, or split.")
    services: list[str] = Field(default_factory=list, description="Services built from it.")


class BuildReport(BaseModel):
    """The outcome of a build, library-wide."""

    documents: list[DocumentOutcome] = Field(default_factory=list, description="Every input document.")
    services: list[ServiceBuildResult] = Field(default_factory=list, description="Built services, by name.")
    failures: list[SpecFailure] = Field(default_factory=list, description="What could not be built.")
    tools: int = Field(default=0, description="Tools over all built services.")
    implemented: int = Field(default=0, description="Implemented tools over all built services.")
    implemented_share: float = Field(default=0.0, description="Library-wide implemented / tools.")
    actions: int = Field(default=0, description="Action tools over all built services.")
    stateful_share: float = Field(default=0.0, description="Library-wide (implemented + actions) / tools.")
    verified_services: int = Field(default=0, description="Services whose verification passed.")

    def finish(self) -> BuildReport:
        """Sort everything and compute the totals (call once the lists are complete)."""
        self.services.sort(key=lambda r: r.name)
        self.failures.sort(key=lambda f: f.spec_path)
        self.documents.sort(key=lambda d: d.source)
        self.tools = sum(r.tools for r in self.services)
        self.implemented = sum(r.implemented for r in self.services)
        self.implemented_share = round(self.implemented / self.tools, 4) if self.tools else 0.0
        self.actions = sum(r.actions for r in self.services)
        stateful = self.implemented + self.actions
        self.stateful_share = round(stateful / self.tools, 4) if self.tools else 0.0
        self.verified_services = sum(1 for r in self.services if r.verified)
        return self

    def counts(self) -> dict[str, int]:
        """Documents per status."""
        out: dict[str, int] = {}
        for doc in self.documents:
            out[doc.status] = out.get(doc.status, 0) + 1
        return out
