"""Rubric criteria: small named objects with a deterministic check, found by kind in a registry.

A criterion reads only what it needs through a ``StateReader`` (targeted row selects,
never a full dump), so the same criteria grade an in-process runtime and a remote
service over ``POST /admin/episodes/{id}/select``. Kinds register by name, directly or
as a lazy ``"pkg.mod:Class"`` string (STYLE #5), so a new kind never edits this file.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from compoworld.errors import CompoWorldError
from orchestrator.models import CriterionSpec

__all__ = [
    "Check",
    "Criterion",
    "CriterionError",
    "CriterionRegistry",
    "DumpingStateReader",
    "SeedStateReader",
    "StateReader",
    "WholeStateReader",
    "criterion_registry",
    "register_criterion",
    "seed_reader",
    "whole_state_reader",
]


@runtime_checkable
class StateReader(Protocol):
    """The grader's view of an episode's state: rows of one table of one service that match ``where``."""

    async def select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows (dicts, typed as the service stores them) whose columns equal ``where``; ``action_log`` included."""
        ...


@runtime_checkable
class DumpingStateReader(StateReader, Protocol):
    """A reader that can also return a service's whole typed state (``{"tables", "hash"}``)."""

    async def dump(self, service: str) -> dict[str, Any]: ...


@runtime_checkable
class SeedStateReader(StateReader, Protocol):
    """A reader that can also read the seed a service's episodes fork from (what "new" is relative to)."""

    async def seed_select(self, service: str, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of the seed view matching ``where`` (never an episode's)."""
        ...


@runtime_checkable
class WholeStateReader(SeedStateReader, Protocol):
    """A reader the whole-state guard can use: a state hash, then (only if it differs) every table."""

    async def state_hash(self, service: str) -> str:
        """The runtime's canonical hash of the episode's state in ``service``."""
        ...

    async def tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        """Every table of the episode's state (``action_log`` included), rows sorted by key."""
        ...

    async def seed_tables(self, service: str) -> dict[str, list[dict[str, Any]]]:
        """Every table of the seed view."""
        ...


def seed_reader(reader: StateReader) -> SeedStateReader:
    """The reader as a SeedStateReader, or a CriterionError saying the check needs one."""
    if not isinstance(reader, SeedStateReader):
        raise CriterionError(f"{type(reader).__name__} cannot read the seed state this check compares with")
    return reader


def whole_state_reader(reader: StateReader) -> WholeStateReader:
    if not isinstance(reader, WholeStateReader):
        raise CriterionError(f"{type(reader).__name__} cannot read whole states for the collateral guard")
    return reader


class CriterionError(CompoWorldError, ValueError):
    """A criterion that cannot be checked as written (unknown kind, bad parameters, unknown table)."""


class Check(NamedTuple):
    """A criterion's outcome."""

    passed: bool
    detail: str


class Criterion(BaseModel, ABC):
    """Base of every criterion kind: its fields are the CriterionSpec's ``params``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ClassVar[str] = ""
    needs_service: ClassVar[bool] = True

    @abstractmethod
    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        """Read what the criterion needs and say whether it holds, and why."""

    def describe(self, service: str | None) -> str:
        """The criterion in words (used when a task is generated)."""
        return f"{self.kind} on {service}"


C = TypeVar("C", bound=type[Criterion])


class CriterionRegistry:
    """Kind name -> criterion class, or a lazy ``"module:Class"`` string imported on first use."""

    def __init__(self, entries: Mapping[str, str | type[Criterion]] | None = None) -> None:
        self._entries: dict[str, str | type[Criterion]] = dict(entries or {})

    def register(self, kind: str, target: str | type[Criterion]) -> None:
        self._entries[kind] = target

    def kinds(self) -> list[str]:
        return sorted(self._entries)

    def get(self, kind: str) -> type[Criterion]:
        target = self._entries.get(kind)
        if target is None:
            raise CriterionError(f"unknown criterion kind '{kind}' (known: {', '.join(self.kinds())})")
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(importlib.import_module(module), attr)
            if not (isinstance(target, type) and issubclass(target, Criterion)):
                raise CriterionError(f"criterion kind '{kind}' points at {target!r}, not a Criterion class")
            self._entries[kind] = target
        return target

    def build(self, spec: CriterionSpec) -> Criterion:
        """The criterion object a spec describes; bad parameters raise CriterionError naming them."""
        cls = self.get(spec.kind)
        if cls.needs_service and not spec.service:
            raise CriterionError(f"criterion {spec.id} ({spec.kind}) needs a service")
        try:
            return cls.model_validate(spec.params)
        except ValueError as exc:
            raise CriterionError(f"criterion {spec.id} ({spec.kind}) has invalid params: {exc}") from exc


_KINDS = "orchestrator.rubric.kinds"
#: The registry every grader uses; built-in kinds are lazy strings, extensions call ``register_criterion``.
criterion_registry = CriterionRegistry(
    {
        name: f"{_KINDS}:{cls}"
        for name, cls in {
            "row_exists": "RowExists",
            "field_equals": "FieldEquals",
            "row_absent": "RowAbsent",
            "row_unchanged": "RowUnchanged",
            "action_logged": "ActionLogged",
            "action_absent": "ActionAbsent",
            "answer_contains": "AnswerContains",
        }.items()
    }
    | {
        name: f"orchestrator.rubric.{module}:{cls}"
        for name, (module, cls) in {
            "row_created": ("rows", "RowCreated"),
            "row_updated": ("rows", "RowUpdated"),
            "state_guard": ("guard", "StateGuard"),
            "answer_value": ("answer_kinds", "AnswerValue"),
            "answer_row_field": ("answer_kinds", "AnswerRowField"),
        }.items()
    }
)


def register_criterion(kind: str) -> Callable[[C], C]:
    """Class decorator: make a Criterion subclass available under ``kind``."""

    def deco(cls: C) -> C:
        cls.kind = kind
        criterion_registry.register(kind, cls)
        return cls

    return deco
