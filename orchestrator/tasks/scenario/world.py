"""The world a scenario is set in: who is who across the mounted services, read off their seed state.

Services are built one at a time, yet the same person is a CRM contact, a payer in the payment
service and a recipient in the mailbox. This index finds those people by **real-world values**
(an e-mail address, matched case-insensitively, wherever a row holds one: a top-level column or a
nested field such as ``billing_address.email``), never by id strings that happen to coincide.

For every table it records what a scenario needs: where its rows name a person (the e-mail path
most of its rows fill), its name column, its typed columns by role (money, date, status, title),
and the implemented tools that list, read, create, update and delete it, with the list filter that
matches the e-mail column when the service has one. A **party** table is one whose rows are people
(a name and a distinct e-mail per row); a **record** table holds rows *about* people (invoices,
payments, bookings); a **sink** is a table an implemented create tool can add a row to.

A table's rows are the ``SeedIndex``'s (``Table.rows`` asks it), so the index decides what stays in
memory. ``World(runtimes)`` reads every service at once; a large library is indexed one service at a
time instead (:meth:`World.add` while its runtime is loaded, then :meth:`World.finish`), keeping only
the tables scenarios can reach, and the rows only of those they read rows of (:meth:`World.pinned`:
those keyed to people by e-mail, and the parents a create tool's reference points at); any other
table's rows are read again from its service on first use.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ColumnDef, EntityDef, ToolDef
from compoworld.population import PERSON_ROLES
from compoworld.runtime.service import ServiceRuntime
from orchestrator.tasks.paths import get_path
from orchestrator.tasks.seeds import SeedIndex

__all__ = ["Person", "Table", "World", "email_paths", "is_day"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_NAME_SEMANTICS = ("person_name", "full_name", "name")
_MONEY = ("money", "amount", "price")
#: column names that hold an amount when the spec did not tag them (``amount``, ``total_amount``)
_MONEY_WORDS = ("amount", "total", "balance", "price", "cost", "fee", "subtotal")
_DATE = ("date", "date-time", "datetime")
_TITLE = ("title", "text", "subject")
#: a table is keyed to people by an e-mail path only if this share of its rows fill it
_COVERAGE = 0.8


def email_paths(row: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(dotted path, e-mail) for every e-mail string in a row; lists are followed through index 0 only."""
    out: list[tuple[str, str]] = []
    if depth > 3:
        return out
    if isinstance(row, dict):
        for key, value in row.items():
            out += email_paths(value, f"{prefix}{key}.", depth + 1)
    elif isinstance(row, list) and row:
        out += email_paths(row[0], f"{prefix}0.", depth + 1)
    elif isinstance(row, str) and _EMAIL.match(row):
        out.append((prefix[:-1], row))
    return out


def is_day(value: Any) -> bool:
    """A ``YYYY-MM-DD`` date or a timestamp starting with one."""
    return isinstance(value, str) and len(value) >= 10 and value[:4].isdigit() and value[4] == "-"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _implemented(runtime: ServiceRuntime, tool: ToolDef) -> bool:
    return runtime.tools[tool.name].backend == "implemented"


def _required(tool: ToolDef) -> list[str]:
    return [r for r in tool.input_schema.get("required") or [] if isinstance(r, str)]


def _slim(table: Table) -> None:
    """Its entity and tools without what scenarios never read (descriptions, the columns' JSON schemas,
    the tools' output schemas): the rest of the manifest can be freed."""
    columns = [c.model_copy(update={"description": "", "json_schema": {}}) for c in table.entity.columns]
    table.entity = table.entity.model_copy(update={"columns": columns})
    table._roles.clear()  # found on the entity it had
    for name in ("lister", "reader", "creator", "updater", "deleter"):
        tool = getattr(table, name)
        if tool is not None:
            setattr(table, name, tool.model_copy(update={"output_schema": {}, "description": ""}))


@dataclass
class Table:
    """One entity table of one service, with the roles of its columns and the tools that work on it."""

    service: str
    entity: EntityDef
    seeds: SeedIndex = field(repr=False, compare=False)
    email_path: str | None = None
    name_column: str | None = None
    lister: ToolDef | None = None
    filter_arg: str | None = None
    reader: ToolDef | None = None
    creator: ToolDef | None = None
    updater: ToolDef | None = None
    deleter: ToolDef | None = None
    _shares: dict[tuple[str, Any], float] = field(default_factory=dict, repr=False, compare=False)
    _party: bool | None = field(default=None, repr=False, compare=False)
    _emails: frozenset[str] | None = field(default=None, repr=False, compare=False)
    #: column roles found once (the entity and the seed rows never change): kind -> columns
    _roles: dict[Any, list[ColumnDef]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, str]:
        return self.service, self.entity.table

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The table's seed rows (the index's own list: read once, never changed)."""
        return self.seeds.rows(self.service, self.entity.table)

    @property
    def pk(self) -> str:
        return self.entity.pk

    @property
    def noun(self) -> str:
        """How a person calls a row of this table: 'invoice', 'time off request'."""
        name = self.entity.name
        prefix = self.service.split("_")[0] + "_"
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
        return name.replace("_", " ")

    @property
    def is_party(self) -> bool:
        """Rows are people: a name column and one distinct e-mail per row (decided once: the seed rows
        never change)."""
        if self.email_path is None or self.name_column is None:
            return False
        if self._party is None:
            known = [e for e in (self.email_of(r) for r in self.rows) if e]
            self._party = len(known) >= 3 and len(set(known)) == len(known)
        return self._party

    def emails(self) -> frozenset[str]:
        """The e-mail addresses its rows are keyed to (gathered once)."""
        if self._emails is None:
            self._emails = frozenset(e for e in (self.email_of(r) for r in self.rows) if e)
        return self._emails

    def email_of(self, row: dict[str, Any]) -> str | None:
        if self.email_path is None:
            return None
        value = get_path(row, self.email_path)
        return value.lower() if isinstance(value, str) and _EMAIL.match(value) else None

    def columns(self, semantics: tuple[str, ...], types: tuple[str, ...] = ()) -> list[ColumnDef]:
        """Top-level columns whose semantic (or, failing that, type) is one of these."""
        key = (semantics, types)
        found = self._roles.get(key)
        if found is None:
            found = self._roles[key] = [
                c
                for c in self.entity.columns
                if not c.primary_key and ((c.semantic or "") in semantics or (types and c.type in types))
            ]
        return list(found)

    def _role(self, kind: str, find: Any) -> list[ColumnDef]:
        found = self._roles.get(kind)
        if found is None:
            found = self._roles[kind] = find()
        return list(found)

    def money_columns(self) -> list[ColumnDef]:
        """Amount columns: tagged money, or a number named like an amount (``total_amount``)."""
        return self._role("money", self._money_columns)

    def _money_columns(self) -> list[ColumnDef]:
        named = [
            c
            for c in self.entity.columns
            if c.type in ("number", "integer")
            and not c.primary_key
            and c.name.lower().rsplit("_", 1)[-1] in _MONEY_WORDS
            and c not in self.columns(_MONEY)
        ]
        return [c for c in [*self.columns(_MONEY), *named] if self._share(c, _is_number) >= _COVERAGE]

    def _share(self, column: ColumnDef, test: Any) -> float:
        key = (column.name, test)
        if key not in self._shares:  # the seed rows never change: each share is counted once
            hits = sum(1 for r in self.rows if test(r.get(column.name)))
            self._shares[key] = hits / len(self.rows) if self.rows else 0.0
        return self._shares[key]

    def date_columns(self) -> list[ColumnDef]:
        return self._role(
            "date", lambda: [c for c in self.columns(_DATE) if self._share(c, is_day) >= _COVERAGE]
        )

    def status_columns(self) -> list[ColumnDef]:
        """Columns with a small set of string values: status, priority, stage."""
        return self._role("status", self._status_columns)

    def _status_columns(self) -> list[ColumnDef]:
        out = []
        for c in self.entity.columns:
            if c.primary_key or c.type != "string" or c.ref:
                continue
            values = [r.get(c.name) for r in self.rows]
            if not all(isinstance(v, str) and v for v in values):
                continue
            distinct = set(values)
            if (c.enum or c.semantic == "status") and 2 <= len(distinct) <= 6:
                out.append(c)
        return out

    def label_of(self, row: dict[str, Any]) -> str | None:
        """A name a person would use for the row: its name/title/number column, if it has a readable one."""
        for name in [self.name_column, self.entity.label_column, "number", "title", "subject", "name"]:
            value = row.get(name) if name else None
            if isinstance(value, str) and 3 <= len(value) <= 80 and not value[:4].isdigit():
                return value
        return None


@dataclass
class Person:
    """Someone the services know, by e-mail: the party rows that are them, and the records about them."""

    email: str
    name: str
    parties: list[tuple[Table, dict[str, Any]]] = field(default_factory=list)
    records: list[tuple[Table, dict[str, Any]]] = field(default_factory=list)

    @property
    def is_person(self) -> bool:
        """A person, not an organisation: by the population role its party tables are cast from, else by
        the semantic of their name column."""
        roles = {t.entity.population_role for t, _ in self.parties} - {None}
        if roles:
            return bool(roles & set(PERSON_ROLES))
        return any(
            (t.entity.column(t.name_column or "") or t.entity.columns[0]).semantic == "person_name"
            for t, _ in self.parties
        )

    @property
    def services(self) -> set[str]:
        return {t.service for t, _ in [*self.parties, *self.records]}


class World:
    """Every table of a library with its roles and tools, and every person by e-mail."""

    def __init__(
        self, runtimes: Mapping[str, ServiceRuntime], seeds: SeedIndex | None = None, *, index: bool = True
    ) -> None:
        """Index every runtime now; ``index=False`` leaves it empty for :meth:`add` and :meth:`finish`."""
        self.runtimes = runtimes
        self.seeds = seeds or SeedIndex(runtimes)
        self.tables: dict[tuple[str, str], Table] = {}
        self.people: dict[str, Person] = {}
        #: each service's domain and title, as its manifest names them (kept without the manifest)
        self.domains: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        #: plans derived from the world once and reused by every scenario (the sink plan of each table,
        #: the message tools)
        self.derived: dict[tuple[str, str, str], Any] = {}
        if index:
            for name in sorted(runtimes):
                self.add(runtimes[name])
            self.finish()

    def add(self, runtime: ServiceRuntime, *, compact: bool = False) -> list[Table]:
        """Index one service's tables (services are added in name order); returns the tables kept.

        ``compact`` (a library indexed one service at a time) keeps only the tables a scenario can reach
        through the world: those keyed to people by e-mail, those a create tool adds rows to, and the
        parents :meth:`pinned` names; of those, the rows only of the pinned ones, and of their tools
        what scenarios read (not the output schema or the description). What it leaves out, no
        scenario looks at, so the tasks are the same.
        """
        manifest = runtime.manifest
        self.domains[runtime.name] = manifest.domain
        self.titles[runtime.name] = manifest.title
        added = []
        for entity in manifest.entities:
            table = self._table(runtime, entity)
            if table is not None:
                added.append(table)
        if compact:
            keep = {t.key for t in self.pinned(added)}
            for table in added:
                if table.key not in keep:
                    self.seeds.forget(*table.key)
            added = [t for t in added if t.key in keep or t.creator is not None]
            for table in added:
                _slim(table)
        for table in added:
            self.tables[table.key] = table
        return added

    @staticmethod
    def pinned(tables: list[Table]) -> list[Table]:
        """Of one service's tables, those whose rows scenarios read: rows keyed to people by e-mail in a
        table a tool lists or adds to (people, their records, party tables to mirror into) and the
        listable tables a create tool's required reference names (a sink's scopes). Reading another
        table's rows stays correct, only slower (read again)."""
        named: set[str] = set()
        for table in tables:
            tool = table.creator
            if tool is None:
                continue
            for arg in _required(tool):
                column = table.entity.column(tool.arg_columns.get(arg, ""))
                if column is not None and (column.ref or (column.semantic or "").startswith("id:")):
                    named.add(column.ref or (column.semantic or "")[3:])
        return [
            t
            for t in tables
            if (t.email_path is not None and (t.lister or t.creator))
            or (t.entity.name in named and t.lister is not None)
        ]

    def finish(self) -> None:
        """Find the people once every service is added."""
        self._index_people()

    def _table(self, runtime: ServiceRuntime, entity: EntityDef) -> Table | None:
        rows = self.seeds.read(runtime, entity.table)
        if not rows:
            return None
        table = Table(runtime.name, entity, self.seeds)
        paths = Counter(p for r in rows for p in dict(email_paths(r)))
        # a path ending in a list index (``emails.0``) is the row's own address book, not who it is about
        best = [
            p
            for p, n in paths.most_common()
            if n >= _COVERAGE * len(rows) and not p.rsplit(".", 1)[-1].isdigit()
        ]
        if best:
            table.email_path = min(best, key=lambda p: (-paths[p], p.count("."), p))
        names = table.columns(_NAME_SEMANTICS) or table.columns(("company_name",))
        if names:
            table.name_column = names[0].name
        for tool in runtime.manifest.tools:
            if tool.entity != entity.name or not _implemented(runtime, tool):
                continue
            self._attach(table, tool)
        return table

    def _attach(self, table: Table, tool: ToolDef) -> None:
        required = set(_required(tool)) - {tool.limit_arg, tool.pk_arg}
        if tool.operation in ("list", "search") and table.lister is None and not required:
            table.lister = tool
            email_column = table.email_path if table.email_path and "." not in table.email_path else None
            table.filter_arg = next(
                (a for a, c in sorted(tool.arg_columns.items()) if email_column and c == email_column), None
            )
        elif tool.operation == "read" and table.reader is None and not required:
            table.reader = tool
        elif tool.operation == "create" and table.creator is None:
            table.creator = tool
        elif tool.operation == "update" and table.updater is None:
            table.updater = tool
        elif tool.operation == "delete" and table.deleter is None and not required:
            table.deleter = tool

    def _index_people(self) -> None:
        for table in self.tables.values():
            if table.email_path is None or table.lister is None:
                continue
            party = table.is_party
            for row in table.rows:
                email = table.email_of(row)
                if email is None:
                    continue
                person = self.people.setdefault(email, Person(email=email, name=""))
                if party:
                    person.parties.append((table, row))
                    if not person.name and isinstance(row.get(table.name_column or ""), str):
                        person.name = str(row[table.name_column or ""]).strip()
                elif table.entity.population_role is None:
                    person.records.append((table, row))
        self.people = {e: p for e, p in sorted(self.people.items()) if p.name and p.parties}

    def namesakes(self, person: Person) -> list[Person]:
        """Other people with the same name (near-duplicates an agent has to tell apart)."""
        key = person.name.casefold()
        return [p for p in self.people.values() if p is not person and p.name.casefold() == key]

    def domain(self, service: str) -> str:
        """The service's domain (``accounting``, ``crm``...), as its manifest names it."""
        return self.domains.get(service, "")

    def title(self, service: str) -> str:
        """The service's title, as its manifest names it ("" when it has none)."""
        return self.titles.get(service, "")

    def in_vertical(self, domains: Collection[str]) -> frozenset[str]:
        """The services whose domain is one of ``domains`` (a vertical's systems)."""
        key = ("vertical", "", ",".join(sorted(domains)))
        found = self.derived.get(key)
        if found is None:
            found = self.derived[key] = frozenset(s for s in self.domains if self.domain(s) in domains)
        return found

    def sinks(self) -> tuple[Table, ...]:
        """Tables an implemented create tool adds rows to (found once: the tables never change)."""
        found = self.derived.get(("sinks", "", ""))
        if found is None:
            found = self.derived[("sinks", "", "")] = tuple(
                t for t in self.tables.values() if t.creator is not None
            )
        return found

    def table(self, service: str, table: str) -> Table | None:
        return self.tables.get((service, table))

    def of_service(self, service: str) -> list[Table]:
        """The service's tables, in the order ``tables`` holds them (indexed once, when first asked)."""
        index = self.derived.get(("service_tables", "", ""))
        if index is None:
            index = self.derived[("service_tables", "", "")] = {}
            for table in self.tables.values():
                index.setdefault(table.service, []).append(table)
        found: list[Table] = index.get(service, [])
        return found

    def entity_table(self, service: str, entity: str) -> Table | None:
        """The service's first table of the entity named so."""
        return next((t for t in self.of_service(service) if t.entity.name == entity), None)
