"""The opening every scenario shares: a real person, found by name in one system, and their records in another.

``open_scene`` lists a person the world knows in the party table by name (when the table holds two
people of that name, telling them apart by e-mail domain, or by a second lookup: the namesake has no
records in a system where the person has some) and hands the archetypes a
``Scene``; each archetype then lists the record table it needs (``Scene.use_records``), carrying the
e-mail found in the opening into that listing, so information flows from one service to the next.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from compoworld.manifest import ColumnDef
from orchestrator.tasks.paths import page_size
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario.draft import Draft, Found, result_rows
from orchestrator.tasks.scenario.spread import by_service
from orchestrator.tasks.scenario.verticals import SHARED_DOMAINS, Vertical
from orchestrator.tasks.scenario.world import Person, Table, World

T = TypeVar("T")

__all__ = ["Records", "Scene", "Subject", "body_path", "open_scene", "plain_title", "subjects", "system_name"]


def system_name(world: World, service: str) -> str:
    """How a colleague names a service: its title without the 'API' suffix ('GOV.UK Pay', 'CRM')."""
    title = world.title(service) or service.replace("_", " ").title()
    return plain_title(title)


def plain_title(title: str) -> str:
    """A spec title as a person says it: 'The SureVoIP RESTful API' -> 'SureVoIP', 'API for the COVID-19
    Tracking QR Code Signin Server.' -> 'COVID-19 Tracking QR Code Signin Server', 'Twilio - Numbers' ->
    'Twilio Numbers'."""
    short = re.sub(r"^(?:an?\s+)?API\s+(?:for|of)\s+", "", title.strip(), flags=re.IGNORECASE)
    short = re.sub(r"\s+API\b.*$", "", short)
    short = re.sub(r"^the\s+", "", short, flags=re.IGNORECASE)
    short = re.sub(r"(?:\s+(?:RESTful|REST|HTTP|JSON))+$", "", short)
    short = re.sub(r"\s+-\s+", " ", short).rstrip(" .:;,").strip()
    return short or title


def body_path(table: Table, column_path: str) -> str:
    """A column path (``billing_address.email``) as the list tool's rows spell it."""
    tool = table.lister
    head, _, rest = column_path.partition(".")
    key = tool.response.key_of(head) if tool is not None and tool.response is not None else head
    return f"{key}.{rest}" if rest else key


@dataclass(frozen=True)
class Subject:
    """A person and the party row that names them; the record tables holding rows about them."""

    person: Person
    party: Table
    party_row: dict[str, Any]
    records: tuple[tuple[Table, tuple[dict[str, Any], ...]], ...] = ()


def _scoped_alike(table: Table, rows: Sequence[dict[str, Any]]) -> bool:
    """Whether one list call can return all of them (they share every required scope argument)."""
    tool = table.lister
    if tool is None:
        return False
    for name in tool.input_schema.get("required") or []:
        column = tool.arg_columns.get(name)
        if column is not None and len({str(r.get(column)) for r in rows}) > 1:
            return False
    return True


def subjects(world: World) -> list[Subject]:
    """Every (person, party row) a scenario can open with, with their records elsewhere, in a stable order."""
    out: list[Subject] = []
    for person in world.people.values():
        by_table: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for table, row in person.records:
            by_table.setdefault(table.key, []).append(row)
        for party, row in person.parties:
            if party.lister is None:
                continue
            records = tuple(
                (world.tables[key], tuple(rows))
                for key, rows in sorted(by_table.items())
                if key[0] != party.service and _scoped_alike(world.tables[key], rows)
            )
            out.append(Subject(person, party, row, records))
    return out


@dataclass
class Records:
    """One record table of the person's, listed: its rows about them and where the listing put them."""

    table: Table
    rows: tuple[dict[str, Any], ...]
    found: Found


@dataclass
class Scene:
    """What the opening found, the record listings archetypes asked for, and the instruction as it grows."""

    draft: Draft
    vertical: Vertical
    subject: Subject
    who: str
    email_ref: str
    party_found: Found
    current: Records | None = None
    reused: bool = False
    listed: list[Records] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    scopes: dict[tuple[str, str], Found] = field(default_factory=dict)
    scope_rows: dict[tuple[str, str], tuple[str, Table, dict[str, Any]]] = field(default_factory=dict)
    #: record tables a scenario already acted on (cancelled, refunded one of their rows): one act each
    acted: set[tuple[str, str]] = field(default_factory=set)
    #: the archetype now planning, and the record tables each archetype has used (never the same one twice)
    archetype: str = ""
    claimed: dict[str, set[tuple[str, str]]] = field(default_factory=dict)

    @property
    def person(self) -> Person:
        return self.subject.person

    def draw(self, options: Sequence[T], service: Callable[[T], str]) -> T:
        """One of ``options``, a service first, balanced as the scenario draws (``spread.by_service``):
        the scenario's vertical favoured, the shared kinds next, the run's tally against the busiest."""
        return by_service(
            self.draft.rng,
            options,
            service,
            favoured=self.favoured,
            shared=self.shared,
            usage=self.draft.usage,
        )

    @property
    def world(self) -> World:
        return self.draft.world

    @property
    def first_name(self) -> str:
        """How a message greets them: a person by first name, an organisation by its name."""
        party = self.subject.party
        named = party.entity.column(party.name_column or "")
        if not self.person.is_person or (named is not None and named.semantic == "company_name"):
            return self.person.name  # a company, even one cast from a person's role
        return self.person.name.split()[0].rstrip(",;")

    @property
    def favoured(self) -> frozenset[str]:
        """The services of the scenario's vertical (drawn first for its records and writes)."""
        return self.world.in_vertical(self.vertical.domains)

    @property
    def shared(self) -> frozenset[str]:
        """The systems every vertical runs (drawn after the vertical's own)."""
        return self.world.in_vertical(SHARED_DOMAINS)

    @property
    def records(self) -> Table:
        if self.current is None:
            raise DraftRejected("no record listing")
        return self.current.table

    @property
    def rows(self) -> tuple[dict[str, Any], ...]:
        return self.current.rows if self.current is not None else ()

    def system(self, table: Table) -> str:
        return system_name(self.world, table.service)

    def phone(self) -> tuple[str, str] | None:
        """The person's phone number as the party row the opening found holds it, and where (a binding)."""
        party, row = self.subject.party, self.subject.party_row
        for column in party.entity.columns:
            value = row.get(column.name)
            if (
                column.semantic == "phone"
                and isinstance(value, str)
                and sum(ch.isdigit() for ch in value) >= 7
            ):
                return value, self.party_found.ref(row, column.name)
        return None

    async def use_records(self, accept: Callable[[Table, tuple[dict[str, Any], ...]], bool]) -> Records:
        """A record table of the person's that ``accept`` takes: a fresh one (listed now) where there is one,
        else one an earlier archetype already listed (its listing is reused)."""
        used = {r.table.key: r for r in self.listed}
        mine = self.claimed.setdefault(self.archetype, set())
        options = [(t, rows) for t, rows in self.subject.records if t.key not in mine and accept(t, rows)]
        fresh = [o for o in options if o[0].key not in used]
        if not options:
            raise DraftRejected("the person has no records this archetype can use")
        # the work moves on to a system the scenario has not touched where it can (then to another table)
        elsewhere = [o for o in fresh if o[0].service not in self.draft.services]
        # a service first (its vertical's more often), then one of its tables: not the busiest systems
        table, rows = self.draw(elsewhere or fresh or options, lambda o: o[0].service)
        mine.add(table.key)
        self.reused = table.key in used
        if self.reused:
            self.current = used[table.key]
            return self.current
        found = await self.draft.list_rows(table, list(rows), person=self.person, via=self.email_ref)
        self.current = Records(table, rows, found)
        self.listed.append(self.current)
        return self.current

    async def open_record(self, row: dict[str, Any]) -> bool:
        """Open one found record by its key, as a person checks the one they picked (where it can be read);
        whether it could be opened."""
        current = self.current
        reader = current.table.reader if current is not None else None
        if current is None or reader is None or not reader.pk_arg:
            return False
        table, key = current.table, reader.pk_arg
        await self.draft.call(
            table.service, reader, {key: row.get(table.pk)}, {key: current.found.ref(row, table.pk)}
        )
        return True

    def numeric(self, column: ColumnDef) -> list[float]:
        values = [r.get(column.name) for r in self.rows]
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise DraftRejected("records lack a numeric value")
        return [float(v) for v in values]  # type: ignore[arg-type]

    def source(self, kind: str, column: str | None = None) -> str:
        """An aggregate source over the person's rows of the record listing (``sum:3:amount@email=x``)."""
        if self.current is None or self.current.table.email_path is None:
            raise DraftRejected("no record listing to aggregate")
        records = self.current.table
        field_part = f":{body_path(records, column)}" if column else ""
        where = f"@{body_path(records, records.email_path or '')}={self.person.email}"
        return f"{kind}:{self.current.found.step}{field_part}{where}"


def _rivals(subject: Subject) -> list[dict[str, Any]]:
    """Other rows of the party table with the person's name (near-duplicates to tell apart)."""
    person, party = subject.person, subject.party
    return [
        r
        for r in party.rows
        if party.email_of(r) != person.email
        and str(r.get(party.name_column or "")).casefold() == person.name.casefold()
    ]


def _telling(
    subject: Subject, rivals: Sequence[dict[str, Any]]
) -> list[tuple[Table, tuple[dict[str, Any], ...]]]:
    """Record tables that tell the person from every namesake: they hold the person's records and none of
    a namesake's (checking that is a lookup of its own: a listing by the namesake's e-mail, or of the table)."""
    emails = {subject.party.email_of(r) for r in rivals} - {None}
    return [(t, rows) for t, rows in subject.records if t.lister is not None and not t.emails() & emails]


async def _check_rivals(
    draft: Draft,
    table: Table,
    rows: tuple[dict[str, Any], ...],
    found: Found,
    rivals: Sequence[dict[str, Any]],
) -> Records | None:
    """Look the namesakes up in the telling table: by each one's e-mail (bound from the party listing) where
    the table can be listed by e-mail, else by listing it (the person's rows are there, theirs are not; the
    listing is kept for the archetypes)."""
    lister, party = table.lister, found.table
    assert lister is not None and party.email_path
    emails = [party.email_of(r) for r in rivals]
    if not table.filter_arg:
        listed = await draft.list_rows(table, list(rows))
        data = draft.results[listed.step]
        if any(table.email_of(r) in emails for _, r in result_rows(lister, data)):
            raise DraftRejected("a namesake has records in the table meant to tell them apart")
        return Records(table, rows, listed)
    for rival, email in zip(rivals, emails, strict=True):
        args: dict[str, Any] = {table.filter_arg: email}
        size = page_size(lister, 200)
        if lister.limit_arg and size is not None:
            args[lister.limit_arg] = size
        data = await draft.call(
            table.service, lister, args, {table.filter_arg: found.ref(rival, party.email_path)}
        )
        if any(table.email_of(r) == email for _, r in result_rows(lister, data)):
            raise DraftRejected("a namesake has records in the table meant to tell them apart")
    return None


_OPENINGS = (
    "Start by looking up {who} in {system}.",
    "{who} is in {system}; pull up their record there first.",
    "First find {who} in {system}.",
)


async def open_scene(draft: Draft, vertical: Vertical, subject: Subject) -> Scene:
    """Run the opening: find the person by name in the party table (their e-mail comes from there)."""
    party = subject.party
    if party.email_path is None:
        raise DraftRejected("party table has no e-mail")
    person, rivals = subject.person, _rivals(subject)
    query = person.name if party.lister and party.lister.search_arg else None
    found = await draft.list_rows(party, [subject.party_row, *rivals], query=query)
    who, listed = person.name, None
    if rivals:
        domain = person.email.split("@")[-1]
        by_domain = not any((party.email_of(r) or "").endswith("@" + domain) for r in rivals)
        telling = _telling(subject, rivals)
        if telling and (not by_domain or draft.rng.random() < 0.5):
            table, rows = by_service(draft.rng, telling, lambda o: o[0].service, usage=draft.usage)
            listed = await _check_rivals(draft, table, rows, found, rivals)
            where = system_name(draft.world, table.service)
            who = f"{person.name} (there is more than one; we mean the one with {table.noun}s in {where})"
        elif by_domain:
            who = f"{person.name} (the one with the {domain} e-mail address)"
        else:
            raise DraftRejected("namesakes share an e-mail domain")
        draft.labels.add("disambiguation")
        draft.hidden += [party.email_of(r) for r in rivals]
    email_ref = found.ref(subject.party_row, party.email_path)
    reader = party.reader
    if reader is not None and reader.pk_arg and subject.party_row.get(party.pk) is not None:
        # "pull up their record": the person's own record, opened by the key the listing gave
        key = reader.pk_arg
        await draft.call(
            party.service,
            reader,
            {key: subject.party_row[party.pk]},
            {key: found.ref(subject.party_row, party.pk)},
        )
    draft.hidden.append(person.email)
    draft.stated.append(person.name)
    scene = Scene(draft, vertical, subject, who, email_ref, found)
    if listed is not None:
        scene.listed.append(listed)
    opening = draft.rng.choice(_OPENINGS).format(who=who, system=scene.system(party))
    scene.sentences.append(opening[0].upper() + opening[1:])
    return scene
