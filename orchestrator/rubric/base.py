"""Rubric criteria: small named objects with a deterministic check, found by kind in a registry.

A criterion reads only what it needs through a ``StateReader`` (targeted row selects,
never a full dump), so the same criteria grade an in-process runtime and a remote
service over ``POST /admin/episodes/{id}/select``. Kinds register by name, directly or
as a lazy ``"pkg.mod:Class"`` string (STYLE #5), so a new kind never edits this file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from compoworld.errors import CompoWorldError
from compoworld.registry import Registry, RegistryError
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


#: (reader class, protocol) -> whether the class provides the protocol: a pure memo (see ``_provides``)
_PROVIDES: dict[tuple[type, type], bool] = {}


def _provides(reader: Any, protocol: type) -> bool:
    """``isinstance(reader, protocol)``, decided once per reader class (a protocol check walks every
    member each time, and graders make it for every row criterion)."""
    key = (type(reader), protocol)
    found = _PROVIDES.get(key)
    if found is None:
        found = _PROVIDES[key] = issubclass(key[0], protocol)
    return found


def seed_reader(reader: StateReader) -> SeedStateReader:
    """The reader as a SeedStateReader, or a CriterionError saying the check needs one."""
    if not _provides(reader, SeedStateReader):
        raise CriterionError(f"{type(reader).__name__} cannot read the seed state this check compares with")
    return cast(SeedStateReader, reader)


def whole_state_reader(reader: StateReader) -> WholeStateReader:
    if not _provides(reader, WholeStateReader):
        raise CriterionError(f"{type(reader).__name__} cannot read whole states for the collateral guard")
    return cast(WholeStateReader, reader)


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


def _is_criterion(value: object) -> type[Criterion]:
    if not (isinstance(value, type) and issubclass(value, Criterion)):
        raise TypeError(f"{value!r} is not a Criterion class")
    return value


class CriterionRegistry:
    """Kind name -> criterion class (a ``Registry``: lazy ``"module:Class"`` strings, entry points)."""

    def __init__(
        self, entries: Mapping[str, str | type[Criterion]] | None = None, *, entry_points: str | None = None
    ) -> None:
        self._registry: Registry[type[Criterion]] = Registry(
            "criterion kind", entry_points=entry_points, check=_is_criterion
        )
        for kind, target in (entries or {}).items():
            self.register(kind, target)

    def register(self, kind: str, target: str | type[Criterion]) -> None:
        """Add ``kind``; a different class under a taken kind is refused (``CriterionError``)."""
        try:
            self._registry.register(kind, target)
        except RegistryError as exc:
            raise CriterionError(str(exc)) from exc

    def kinds(self) -> list[str]:
        return self._registry.names()

    def get(self, kind: str) -> type[Criterion]:
        try:
            return self._registry.get(kind)
        except RegistryError as exc:
            raise CriterionError(str(exc)) from exc

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
#: The registry every grader uses; built-in kinds are lazy strings, extensions call ``register_criterion``
#: or, from an installed package, name their class in the ``compoworld.criteria`` entry-point group.
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
    },
    entry_points="compoworld.criteria",
)


def register_criterion(kind: str) -> Callable[[C], C]:
    """Class decorator: make a Criterion subclass available under ``kind``."""

    def deco(cls: C) -> C:
        cls.kind = kind
        criterion_registry.register(kind, cls)
        return cls

    return deco
