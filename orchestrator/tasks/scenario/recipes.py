"""The workflow archetypes, registered by name: what each needs of the world, what it does, how it is asked.

Every archetype runs on the shared scene (a person found by name in one system): it lists the
record table it needs in another (``needs``: ``money`` or ``date`` columns, a table it can
``delete`` from), then writes through the draft primitives and adds its sentences, house rules and
report asks. An archetype is registered in ``ARCHETYPES`` as data, ``Archetype(name, needs, plan)``;
a scenario chains several over one scene, so adding one is adding an entry.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from compoworld.manifest import ColumnDef
from orchestrator.models import StepCondition
from orchestrator.tasks.archetypes import ARCHETYPES
from orchestrator.tasks.paths import page_size
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario.messages import send_message
from orchestrator.tasks.scenario.scene import Records, Scene
from orchestrator.tasks.scenario.sinks import Sink, shift_date, sink_for, stamp_like
from orchestrator.tasks.scenario.world import Table, World, is_day

__all__ = ["Archetype", "a_or_an", "fits"]

Plan = Callable[[Scene], Awaitable[None]]


@dataclass
class Archetype:
    """A named workflow over roles: what the record table must hold, and the plan that adds its steps."""

    name: str
    needs: tuple[str, ...]
    plan: Plan
    summary: str = ""
    #: a further test of a record table, for needs the world must answer (an act the table offers)
    accepts: Callable[[World, Table, tuple[dict[str, Any], ...]], bool] | None = None
    #: whether a scenario may run it again on another record table or system (count their records in two
    #: systems, tidy up two kinds of record); never twice on the same table
    repeatable: bool = False


def a_or_an(noun: str) -> str:
    """'an invoice', 'a user', 'a unit', 'an hour' is out of reach: by the first letters' sound, roughly."""
    low = noun.lower()
    vowel = low[:1] in "aeiou" and not re.match(r"u[bcdfgjklmnprstvz][aeiou]|eu|one\b", low)
    return ("an " if vowel else "a ") + noun


def _words(column: ColumnDef) -> str:
    return column.name.replace("_", " ")


def _numeric(rows: tuple[dict[str, Any], ...], column: ColumnDef) -> bool:
    return bool(rows) and all(
        isinstance(r.get(column.name), (int, float)) and not isinstance(r.get(column.name), bool)
        for r in rows
    )


def _money(table: Table, rows: tuple[dict[str, Any], ...]) -> ColumnDef | None:
    return next((c for c in table.money_columns() if _numeric(rows, c)), None)


def _latest(table: Table, rows: tuple[dict[str, Any], ...]) -> ColumnDef | None:
    for column in table.date_columns():
        if not rows or not all(is_day(r.get(column.name)) for r in rows):
            continue
        days = [str(r.get(column.name))[:10] for r in rows]
        if days.count(max(days)) == 1:
            return column
    return None


Picker = Callable[[Table, tuple[dict[str, Any], ...]], ColumnDef | None]


async def _records_with(scene: Scene, pick: Picker, at_least: int = 0) -> tuple[Records, ColumnDef]:
    """The person's records in a table where ``pick`` finds a column (and at least ``at_least``
    rows), with that column."""
    current = await scene.use_records(lambda t, rows: len(rows) >= at_least and pick(t, rows) is not None)
    column = pick(current.table, current.rows)
    assert column is not None
    return current, column


def fits(
    archetype: Archetype, table: Table, rows: tuple[dict[str, Any], ...], world: World | None = None
) -> bool:
    """Whether a record table of the person's can serve the archetype's needs."""
    if archetype.accepts is not None and (world is None or not archetype.accepts(world, table, rows)):
        return False
    if "money" in archetype.needs and _money(table, rows) is None:
        return False
    if "date" in archetype.needs and _latest(table, rows) is None:
        return False
    return not ("delete" in archetype.needs and table.deleter is None)


def _fmt(value: float) -> str:
    return f"{value:,.2f}" if not float(value).is_integer() else f"{int(value):,}"


def _sinks(world: World, purposes: tuple[str, ...], date: bool, money: bool) -> tuple[Sink, ...]:
    """The sinks for these purposes (with a date or an amount column where asked), in table key order;
    found once per world and kind."""
    key = ("sinks_for", ",".join(purposes), f"{date:d}{money:d}")
    if key not in world.derived:
        found = []
        for table in world.sinks():
            sink = sink_for(world, table)
            if sink is None or sink.purpose not in purposes or table.is_party:
                continue
            if (date and sink.date is None) or (money and sink.money is None):
                continue
            found.append(sink)
        world.derived[key] = tuple(sorted(found, key=lambda s: s.table.key))
    sinks: tuple[Sink, ...] = world.derived[key]
    return sinks


def _sink(scene: Scene, purposes: tuple[str, ...], *, date: bool = False, money: bool = False) -> Sink:
    """A sink for this purpose, in a service the scenario has not used yet where there is one."""
    used = set(scene.draft.services)
    options = _sinks(scene.world, purposes, date, money)
    pool = [s for s in options if s.service not in used] or options
    if not pool:
        raise DraftRejected(f"no {'/'.join(purposes)} sink can take this write")
    return scene.draw(pool, lambda s: s.service)


async def _write(
    scene: Scene,
    sink: Sink,
    title: str,
    extra: dict[str, Any] | None = None,
    bindings: dict[str, str] | None = None,
    condition: StepCondition | None = None,
) -> str:
    """Create the sink row (finding its scope row first); the words that ask for it."""
    draft = scene.draft
    values: dict[str, Any] = {sink.title: title, **(sink.fixed or {}), **(extra or {})}
    binds = dict(bindings or {})
    where = ""
    scope_row = None
    if sink.scopes:
        column, parent, row = _scope_row(scene, sink)
        found = scene.scopes.get(parent.key)
        if found is None:
            found = scene.scopes[parent.key] = await draft.list_rows(parent, [row])
        binds[column] = found.ref(row, parent.pk)
        values[column] = row.get(parent.pk)
        scope_row = {column: row.get(parent.pk)}
        where = f" in the '{parent.label_of(row)}' {parent.noun}"
        draft.stated.append(parent.label_of(row))
    dated = ""
    if sink.date is not None and sink.date.name not in values:
        day = stamp_like(sink.date, shift_date(draft.today, 0))
        values[sink.date.name] = day
        dated = f", dated {day[:10]}"
        draft.stated.append(day[:10])
    if sink.email:
        values[sink.email] = scene.person.email
        binds[sink.email] = scene.email_ref
    if sink.name:
        values[sink.name] = scene.person.name
    await draft.create(sink.table, values, binds, condition, scope_row)
    draft.stated.append(title)
    noun = sink.table.noun
    return f'add {a_or_an(noun)} in {scene.system(sink.table)}{where} titled "{title}"{dated}'


def _scope_row(scene: Scene, sink: Sink) -> tuple[str, Table, dict[str, Any]]:
    """The scope row (task list, collection) of a sink: the one this scene already chose, or one at random."""
    assert sink.scopes
    chosen = scene.scope_rows.get(sink.table.key)
    if chosen is None:
        chosen = scene.scope_rows[sink.table.key] = scene.draft.rng.choice(sink.scopes)
    return chosen


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- the archetypes ----------------------------------------------------------------------------


async def _report(scene: Scene) -> None:
    current = await scene.use_records(lambda t, rows: True)
    table, rows = current.table, current.rows
    if scene.reused:
        scene.sentences.append(f"Count those {table.noun}s in {scene.system(table)} as well.")
    else:
        scene.sentences.append(f"Then find every {table.noun} of theirs in {scene.system(table)}.")
    asked = scene.draft.answer(f"number of {table.noun}s in {table.service}", len(rows))
    if asked:
        scene.asks.append(f"how many {table.noun}s they have in {scene.system(table)}")
    column = _money(table, rows)
    if column is not None:
        total = round(sum(scene.numeric(column)), 2)
        if scene.draft.answer(f"total {_words(column)}", total):
            scene.asks.append(f"what the {_words(column)} of those {table.noun}s adds up to")
            asked = True
    if not asked:  # the listing would be needed for nothing the report can check
        raise DraftRejected("the report would repeat a value it already asks for")
    scene.draft.labels.add("aggregation")


def _ranked(table: Table, rows: tuple[dict[str, Any], ...]) -> ColumnDef | None:
    """The amount column of two or more records with a single largest amount (what ``rank`` picks by)."""
    column = _money(table, rows)
    if column is None or len(rows) < 2:
        return None
    values = [r[column.name] for r in rows]
    return column if values.count(max(values)) == 1 else None


async def _rank(scene: Scene) -> None:
    current, column = await _records_with(scene, _ranked)
    table, rows = current.table, current.rows
    values = scene.numeric(column)
    top = max(values)
    row = rows[values.index(top)]
    await scene.open_record(row)
    scene.sentences.append(
        f"Go through their {table.noun}s in {scene.system(table)} and pick the one with the largest "
        f"{_words(column)}."
    )
    sink = _sink(scene, ("work", "money"))
    extra: dict[str, Any] = {}
    binds: dict[str, str] = {}
    if sink.money is not None:
        extra[sink.money.name] = row.get(column.name)
        binds[sink.money.name] = current.found.ref(row, column.name)
    ask = await _write(scene, sink, f"Review {table.noun} for {scene.person.name}", extra, binds)
    tail = f" with that {_words(column)} as its amount." if extra else "."
    scene.sentences.append(_cap(ask) + tail)
    if scene.draft.answer(f"largest {column.name}", top, rivals=values):
        scene.asks.append(f"the {_words(column)} of the {table.noun} you picked")
    scene.draft.labels |= {"ranking", "data transformation"} if extra else {"ranking"}


async def _follow_up(scene: Scene) -> None:
    current, column = await _records_with(scene, _latest)
    table, rows = current.table, current.rows
    days = scene.draft.rng.choice(scene.vertical.follow_up_days)
    latest = max(str(r.get(column.name)) for r in rows)
    await scene.open_record(next(r for r in rows if str(r.get(column.name)) == latest))
    sink = _sink(scene, ("work", "calendar"), date=True)
    assert sink.date is not None
    due = stamp_like(sink.date, shift_date(latest, days))
    scene.rules.append(scene.vertical.follow_up_rule.format(days=days).replace(" 1 days", " 1 day"))
    scene.sentences.append(
        f"Check their {table.noun}s in {scene.system(table)}; only the most recent one counts."
    )
    ask = await _write(scene, sink, f"Follow up with {scene.person.name}", {sink.date.name: due})
    scene.sentences.append(_cap(ask) + ", due when the house rule says.")
    if scene.draft.answer(f"latest {column.name}", latest[:10], semantic="date"):
        scene.asks.append(f"the date of their most recent {table.noun}")
    scene.draft.hidden.append(due[:10])
    scene.draft.labels |= {"ranking", "data transformation"}


async def _schedule(scene: Scene) -> None:
    current, column = await _records_with(scene, _latest)
    table, rows = current.table, current.rows
    latest = max(str(r.get(column.name)) for r in rows)
    sink = _sink(scene, ("calendar", "work"), date=True)
    assert sink.date is not None
    day = stamp_like(sink.date, shift_date(latest, 0))
    scene.sentences.append(
        f"Book time with them on the same day as their most recent {table.noun} in {scene.system(table)}."
    )
    ask = await _write(scene, sink, f"Call with {scene.person.name}", {sink.date.name: day})
    scene.sentences.append("For that, " + ask + ", dated that day.")
    scene.draft.hidden.append(day[:10])
    scene.draft.labels |= {"ranking", "data transformation"}


async def _escalate(scene: Scene) -> None:
    current, column = await _records_with(scene, _money)
    table = current.table
    total = round(sum(scene.numeric(column)), 2)
    rng = scene.draft.rng
    above = [t for t in scene.vertical.thresholds if t < total]
    below = [t for t in scene.vertical.thresholds if t > total]
    sides = [s for s in (above, below) if s]
    if not sides:
        raise DraftRejected("no threshold splits this total")
    threshold = rng.choice(rng.choice(sides))
    taken = total >= threshold
    sink = _sink(scene, ("work", "calendar"))
    source = scene.source("sum", column.name)
    scene.rules.append(scene.vertical.escalation_rule.format(threshold=_fmt(threshold)))
    scene.draft.stated.append(threshold)
    scene.sentences.append(f"Add up the {_words(column)} of their {table.noun}s in {scene.system(table)}.")
    high = StepCondition(source=source, op="gt", value=threshold - 0.005, taken=taken)
    low = StepCondition(source=source, op="lt", value=threshold - 0.005, taken=not taken)
    esc = await _write(scene, sink, f"Escalation: {scene.person.name}", condition=high)
    routine = await _write(scene, sink, f"Routine review: {scene.person.name}", condition=low)
    scene.sentences.append(f"If the rule applies, {esc}; if it does not, {routine} instead.")
    if scene.draft.answer(f"total {column.name}", total):
        scene.asks.append(f"the total {_words(column)} you found")
    scene.draft.labels |= {"aggregation", "conditional"}


async def _bill(scene: Scene) -> None:
    current, column = await _records_with(scene, _money)
    table = current.table
    total = round(sum(scene.numeric(column)), 2)
    sink = _sink(scene, ("money",), money=True)
    assert sink.money is not None
    if sink.money.type == "integer" and not total.is_integer():
        raise DraftRejected("integer amount column cannot take the total")
    amount: float | int = int(total) if sink.money.type == "integer" else total
    scene.sentences.append(
        f"They need one statement: total the {_words(column)} of all their {table.noun}s in {scene.system(table)}."
    )
    ask = await _write(scene, sink, f"Statement for {scene.person.name}", {sink.money.name: amount})
    scene.sentences.append("Then " + ask + " for that total.")
    scene.draft.hidden.append(amount)
    scene.draft.labels |= {"aggregation", "data transformation"}


async def _notify(scene: Scene) -> None:
    text = await send_message(scene)
    scene.sentences.append(text)


def _mirror_targets(world: World) -> tuple[Table, ...]:
    """Party tables a person can be added to by name and e-mail, in key order (found once per world)."""
    key = ("mirror_targets", "", "")
    if key not in world.derived:
        world.derived[key] = tuple(
            sorted(
                (
                    t
                    for t in world.tables.values()
                    if t.creator is not None
                    and t.lister is not None
                    and t.email_path
                    and t.name_column
                    and _nested(t.email_path, "") is not None
                    and t.is_party
                ),
                key=lambda t: t.key,
            )
        )
    found: tuple[Table, ...] = world.derived[key]
    return found


async def _mirror(scene: Scene) -> None:
    person, party = scene.person, scene.subject.party
    used = set(scene.draft.services)
    targets = [
        t for t in _mirror_targets(scene.world) if t.service not in used and person.email not in t.emails()
    ]
    if not targets:
        raise DraftRejected("no other system lacks this person")
    target = scene.draw(targets, lambda t: t.service)
    assert target.email_path and target.name_column and target.lister
    draft = scene.draft
    size = page_size(target.lister, 200)
    args = {target.lister.limit_arg: size} if target.lister.limit_arg and size is not None else {}
    await draft.call(target.service, target.lister, args)
    column = target.email_path.split(".", 1)[0]
    values = {target.name_column: person.name, column: _nested(target.email_path, person.email)}
    await draft.create(target, values, {target.email_path: scene.email_ref})
    # then looks them up there (by e-mail where the listing filters by it) to see the new record is in place
    if target.filter_arg:
        found: dict[str, Any] = {target.filter_arg: person.email, **args}
        await draft.call(target.service, target.lister, found, {target.filter_arg: scene.email_ref})
        after = ", then look them up there by e-mail to make sure the new record is in place."
    else:
        await draft.call(target.service, target.lister, args)
        after = f", then list the {target.noun}s there again to make sure the new record is in place."
    scene.sentences.append(
        f"They are not in {scene.system(target)} yet (check first): add them there as {a_or_an(target.noun)} "
        f"with the same name and e-mail address as in {scene.system(party)}{after}"
    )
    draft.labels.add("data transformation")


def _nested(path: str, value: Any) -> Any:
    """The column value that holds ``value`` at ``path`` (``email``; ``contact.email``; ``emails.0.email``:
    a one-item list), or None for a path a create cannot fill that way."""
    parts = path.split(".")[1:]
    if not parts:
        return value
    if len(parts) == 1 and not parts[0].isdigit():
        return {parts[0]: value}
    if len(parts) == 2 and parts[0] == "0" and not parts[1].isdigit():
        return [{parts[1]: value}]
    return None


async def _clean_up(scene: Scene) -> None:
    """Records a rule covers (a status, or dated before a cutoff) are deleted, or closed by a status change."""

    def splits(table: Table, rows: tuple[dict[str, Any], ...]) -> bool:
        writable = table.deleter is not None or table.updater is not None
        return writable and bool(_rules(table, rows))

    current = await scene.use_records(splits)
    table, rows = current.table, current.rows
    rng = scene.draft.rng
    rule, stated, doomed = rng.choice(_rules(table, rows))
    status = next(
        (c for c in table.status_columns() if c.semantic == "status" or "status" in c.name.lower()), None
    )
    closing = (
        [v for v in _closing_values(status, table) if all(str(r.get(status.name)) != v for r in doomed)]
        if status
        else []
    )
    if (
        table.updater is not None
        and status is not None
        and closing
        and (table.deleter is None or rng.random() < 0.5)
    ):
        target = rng.choice(closing)
        for row in doomed:
            await scene.draft.update(table, current.found, row, {status.name: target})
        scene.rules.append(f"{rule} are closed by setting their {_words(status)} to '{target}'")
        verb = "close"
        scene.draft.stated += [*stated, target]
    elif table.deleter is not None:
        for row in doomed:
            await scene.draft.delete(table, current.found, row)
        scene.rules.append(f"we only remove {rule}")
        verb = "delete"
        scene.draft.stated += stated
    else:
        raise DraftRejected("records can be neither closed nor deleted")
    scene.sentences.append(
        f"Tidy up their {table.noun}s in {scene.system(table)}: {verb} the ones the rule covers, leave the rest."
    )
    if scene.draft.answer(f"{table.noun}s cleaned up", len(doomed)):
        scene.asks.append(f"how many {table.noun}s you {'closed' if verb == 'close' else 'removed'}")
    scene.draft.labels |= {"conditional"} | ({"multi-write"} if len(doomed) > 1 else set())


async def _reconcile(scene: Scene) -> None:
    """The amount one system keeps on the person must equal the total of their records in another; fix it."""
    party, row = scene.subject.party, scene.subject.party_row
    own = next((c for c in party.money_columns() if isinstance(row.get(c.name), (int, float))), None)
    if party.updater is None or own is None or own.name not in party.updater.arg_columns.values():
        raise DraftRejected("the party row keeps no amount to reconcile")
    current, column = await _records_with(scene, _money)
    table = current.table
    total = round(sum(scene.numeric(column)), 2)
    if own.type == "integer" and not float(total).is_integer():
        raise DraftRejected("integer amount column cannot take the total")
    value: float | int = int(total) if own.type == "integer" else total
    differs = abs(float(row[own.name]) - total) > 0.005
    system_a, system_b = scene.system(party), scene.system(table)
    scene.rules.append(
        f"{system_b} is the source of truth for amounts: {system_a}'s {_words(own)} must equal the total "
        f"{_words(column)} of the customer's {table.noun}s there"
    )
    scene.sentences.append(
        f"Reconcile their {_words(own)} in {system_a} with their {table.noun}s in {system_b}, and correct "
        f"{system_a} if the two disagree."
    )
    if differs:
        await scene.draft.update(party, scene.party_found, row, {own.name: value})
    if scene.draft.answer(f"total {column.name}", total):
        scene.asks.append(f"the total {_words(column)} of those {table.noun}s")
    if scene.draft.answer("corrected", "yes" if differs else "no"):
        scene.asks.append(f"whether {system_a} had to be corrected")
    scene.draft.hidden.append(value)
    scene.draft.labels |= {"aggregation", "conditional", "data transformation"}


Rule = tuple[str, list[Any], list[dict[str, Any]]]


def _rules(table: Table, rows: tuple[dict[str, Any], ...]) -> list[Rule]:
    """Rules that cover some of the person's records but not all: a status value, or a date cutoff."""
    out: list[Rule] = []
    for column in table.status_columns():
        for value in _split_values(column, rows):
            doomed = [r for r in rows if str(r.get(column.name)) == value]
            out.append((f"{table.noun}s whose {_words(column)} is '{value}'", [value], doomed))
    for column in table.date_columns():
        if not all(is_day(r.get(column.name)) for r in rows):
            continue
        days = sorted({str(r.get(column.name))[:10] for r in rows})
        if len(days) >= 2:
            cutoff = days[-1]
            doomed = [r for r in rows if str(r.get(column.name))[:10] < cutoff]
            out.append((_before(table.noun, column, cutoff), [cutoff], doomed))
    return out


def _before(noun: str, column: ColumnDef, cutoff: str) -> str:
    """A date rule as a person says it: "invoices created before 2025-02-02", "whose due date is before"."""
    words = _words(column)
    for tail in (" at", " on"):
        if words.endswith(tail):
            return f"{noun}s {words[: -len(tail)]} before {cutoff}"
    if words == "date":
        return f"{noun}s dated before {cutoff}"
    if "date" not in words.split():
        words += " date"
    return f"{noun}s whose {words} is before {cutoff}"


def _closing_values(column: ColumnDef, table: Table) -> list[str]:
    """Values a record may be closed with: the column's options, or the values its rows already hold."""
    if column.enum:
        return [str(v) for v in column.enum]
    return sorted({str(r.get(column.name)) for r in table.rows if r.get(column.name)})


def _split_values(column: ColumnDef, rows: tuple[dict[str, Any], ...]) -> list[str]:
    values = [str(r.get(column.name)) for r in rows]
    return sorted({v for v in values if 0 < values.count(v) < len(values)})


for _archetype in (
    Archetype(
        "report", (), _report, "count (and total) a person's records in another system", repeatable=True
    ),
    Archetype(
        "rank",
        ("money",),
        _rank,
        "pick the largest record and act on it",
        lambda world, table, rows: _ranked(table, rows) is not None,
    ),
    Archetype("follow_up", ("date",), _follow_up, "latest record wins; a follow-up due by the house rule"),
    Archetype("schedule", ("date",), _schedule, "book time on the day of the latest record"),
    Archetype("escalate", ("money",), _escalate, "a threshold rule picks one of two writes"),
    Archetype("bill", ("money",), _bill, "total a person's amounts into a statement"),
    Archetype("notify", ("none",), _notify, "message the person at the e-mail another system holds"),
    Archetype("mirror", ("none",), _mirror, "copy a person into a system that lacks them", repeatable=True),
    Archetype(
        "clean_up", ("delete",), _clean_up, "delete or close the records a rule covers", repeatable=True
    ),
    Archetype("reconcile", ("money",), _reconcile, "make one system's amount match another's records"),
):
    ARCHETYPES.register(_archetype.name, _archetype)
