"""Where a scenario can write: tables a create tool fills, with the roles of the columns it sets.

A sink is usable when every argument its create tool requires is one the scenario can give: a
title, a date, an amount, an e-mail, an option of an enum, or the row's scope (the task list a task
goes in, the collection a ticket belongs to), which the agent finds by the scope row's name.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from compoworld.manifest import ColumnDef
from orchestrator.tasks.scenario.world import Table, World

__all__ = [
    "PURPOSES",
    "TITLE_WORDS",
    "Sink",
    "is_title_column",
    "name_words",
    "purpose_of",
    "shift_date",
    "sink_for",
    "stamp_like",
]

_PRIORITY_WORDS = ("priority", "severity", "urgency")
#: what a row of a table is for, by the words of its entity name (the first purpose that matches)
PURPOSES: dict[str, tuple[str, ...]] = {
    "calendar": ("event", "meeting", "appointment", "booking", "reservation"),
    "work": ("task", "ticket", "activity", "note", "comment", "issue", "case", "todo", "reminder"),
    "money": ("invoice", "bill", "payment", "charge", "refund", "credit", "statement", "order", "quote"),
    "message": ("message", "email", "mail", "sms", "notification"),
}


def purpose_of(table: Table) -> str | None:
    """``work``, ``calendar``, ``money`` or ``message`` for a table whose entity name says so."""
    words = set(table.entity.name.lower().split("_"))
    for purpose, nouns in PURPOSES.items():
        if words & set(nouns):
            return purpose
    return None


@dataclass
class Sink:
    """A table to add rows to, and which of its columns take which part of the scenario."""

    table: Table
    title: str
    date: ColumnDef | None = None
    money: ColumnDef | None = None
    email: str | None = None
    name: str | None = None
    priority: ColumnDef | None = None
    scopes: list[tuple[str, Table, dict[str, Any]]] | None = None
    fixed: dict[str, Any] | None = None
    purpose: str | None = None

    @property
    def service(self) -> str:
        return self.table.service


def _settable(table: Table) -> dict[str, ColumnDef]:
    tool = table.creator
    if tool is None:
        return {}
    out: dict[str, ColumnDef] = {}
    for column_name in tool.arg_columns.values():
        column = table.entity.column(column_name)
        if column is not None and not column.read_only and not column.primary_key:
            out[column.name] = column
    return out


def _wordlist(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: words of a column name that say it holds a row's title, name or description, in the order preferred
TITLE_WORDS = _wordlist(
    "title subject summary name headline label caption description notes note memo comment remarks content "
    "text message body"
)
#: semantics a title may carry (untagged free text included); a date, e-mail, phone, url, id, code or a
#: person's own name is never a place for "Follow up with ..."
_TITLE_SEMANTICS = ("", "title", "subject", "text", "description", "summary")
#: words that make a column a key, a date, a number or an address whatever else its name says
_NOT_TITLE_WORDS = frozenset(
    _wordlist(
        "id ids sid uuid key date at time timestamp day number no count url uri link email phone code type "
        "status channel currency language"
    )
)
#: a name column names the row itself only bare or with these words (``department_name`` names another)
_OWN_NAME_WORDS = frozenset(_wordlist("name display friendly full short long nick"))
#: dates that record what already happened (completed, created, approved): never a due or booked date
_PAST_DATE_WORDS = frozenset(
    _wordlist(
        "completed created updated modified deleted approval approved closed paid last reconciliation "
        "posted sent received"
    )
)
_DUE_DATE_WORDS = ("due", "start", "scheduled", "begin", "date")


def name_words(name: str) -> list[str]:
    """The words of a column name: ``customer_memo`` -> customer, memo; ``FriendlyName`` -> friendly, name."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_title_column(column: ColumnDef, entity: str = "") -> bool:
    """A free-text column meant for a title, a name or a description of a row of ``entity``: by type (a
    plain string, no enum, no format, no reference) and by what its name and semantic say."""
    if column.type != "string" or column.enum or column.ref or column.primary_key:
        return False
    if column.format or (column.semantic or "") not in _TITLE_SEMANTICS:
        return False
    words = set(name_words(column.name))
    if not words & set(TITLE_WORDS) or words & _NOT_TITLE_WORDS:
        return False
    return words & set(TITLE_WORDS) != {"name"} or words <= _OWN_NAME_WORDS | set(name_words(entity))


def _due_dates(columns: dict[str, ColumnDef]) -> list[ColumnDef]:
    """Date columns a new row's due or booked day can go in (never one recording a past event), those
    named for it (``due``, ``start_date``) first."""
    dated = [
        c
        for c in columns.values()
        if c.type == "string"
        and (c.semantic or "") in ("date", "date-time")
        and not set(name_words(c.name)) & _PAST_DATE_WORDS
    ]
    return sorted(
        dated,
        key=lambda c: min(
            (i for i, w in enumerate(_DUE_DATE_WORDS) if w in name_words(c.name)),
            default=len(_DUE_DATE_WORDS),
        ),
    )


def _title(table: Table, columns: dict[str, ColumnDef]) -> str | None:
    """The column a sink's title goes in: one tagged as a title or subject, else the table's label column,
    else the first by the preferred title words, and only ever a title column (``is_title_column``)."""
    titled = [c for c in columns.values() if is_title_column(c, table.entity.name)]
    for column in titled:
        if (column.semantic or "") in ("title", "subject"):
            return column.name
    label = table.entity.label_column
    if any(c.name == label for c in titled):
        return label
    for word in TITLE_WORDS:
        for column in titled:
            if word in name_words(column.name):
                return column.name
    return None


def _scopes(world: World, table: Table) -> list[tuple[str, Table, dict[str, Any]]] | None:
    """Parent rows a required reference argument may point at: ones with a unique name, listable by the agent."""
    tool = table.creator
    assert tool is not None
    for arg in tool.input_schema.get("required") or []:
        column = table.entity.column(tool.arg_columns.get(arg, "")) if arg in tool.arg_columns else None
        if column is None or not (column.ref or (column.semantic or "").startswith("id:")):
            continue
        target = column.ref or (column.semantic or "")[3:]
        parent = world.entity_table(table.service, target)
        if parent is None or parent.lister is None:
            return None
        labelled = [r for r in parent.rows if parent.label_of(r)]
        names = [parent.label_of(r) for r in labelled]
        unique = [r for r, n in zip(labelled, names, strict=True) if names.count(n) == 1]
        if not unique:
            return None
        return [(column.name, parent, r) for r in unique]
    return None


def sink_for(world: World, table: Table) -> Sink | None:
    """The sink plan of a table, or None when its create tool needs something a scenario cannot give.

    A plan depends only on the world, so it is made once per table and shared (callers never change it).
    """
    key = ("sink", *table.key)
    if key not in world.derived:
        world.derived[key] = _plan(world, table)
    plan: Sink | None = world.derived[key]
    return plan


def _plan(world: World, table: Table) -> Sink | None:
    tool = table.creator
    if tool is None:
        return None
    columns = _settable(table)
    title = _title(table, columns)
    if title is None:
        return None
    sink = Sink(table=table, title=title, purpose=purpose_of(table))
    dates = _due_dates(columns)
    sink.date = dates[0] if dates else None
    for column in columns.values():
        semantic = column.semantic or ""
        if semantic in ("date", "date-time"):
            continue
        if sink.money is None and semantic in ("money", "amount") and column.type in ("number", "integer"):
            sink.money = column
        elif sink.email is None and semantic == "email" and column.type == "string":
            sink.email = column.name
        elif sink.name is None and semantic == "person_name" and column.name != title:
            sink.name = column.name
        elif (
            sink.priority is None
            and column.enum
            and len(column.enum) >= 2
            and any(w in column.name.lower() for w in _PRIORITY_WORDS)
        ):
            sink.priority = column
    sink.scopes = _scopes(world, table)
    given = {title, *(c.name for c in (sink.date, sink.money, sink.priority) if c), sink.email, sink.name}
    if sink.scopes:
        given.add(sink.scopes[0][0])
    fixed: dict[str, Any] = {}
    for arg in tool.input_schema.get("required") or []:
        column_name = tool.arg_columns.get(arg)
        if column_name in given or arg in (tool.pk_arg,):
            continue
        option = columns.get(column_name or "")
        if option is None or not option.enum:
            return None
        fixed[option.name] = option.enum[0]
    sink.fixed = fixed
    return sink


def stamp_like(column: ColumnDef | None, day: dt.date) -> str:
    """A day written the way a column holds dates: ``2026-02-03`` or ``2026-02-03T09:00:00Z``."""
    if column is not None and ((column.format or "") == "date-time" or column.semantic == "date-time"):
        return f"{day.isoformat()}T09:00:00Z"
    return day.isoformat()


def shift_date(value: str, days: int) -> dt.date:
    """The calendar day ``days`` after the day a date or timestamp falls on."""
    return dt.date.fromisoformat(value[:10]) + dt.timedelta(days=days)
