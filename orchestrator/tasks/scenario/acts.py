"""Acting on one record a person has: find it by a rule, then change it where it lives.

The other archetypes write *new* rows in a sink (a task, an invoice); many services instead let
you act on a record you found: cancel or capture a payment, close a conversation, retry a message
(an ``action``-backend transition of the record's own status), or add a row that hangs off it (a
refund of a payment, carrying the payment's amount). ``acts_for`` finds both kinds for a record
table from the manifest alone:

- a **transition**: a write tool whose ``action`` moves a row of this entity (``kind="transition"``),
  whose required arguments are the row's key and values the row itself holds;
- an **anchored create**: a create tool of another table of the same service with a required
  reference to this entity, whose other required arguments take values of the record by role (an
  amount from the record's amount).

The ``act`` archetype picks the person's record by a rule a person would state (the most recent
one, the one with the largest amount), and applies one act that the record's state allows (a
transition whose ``refuses`` holds the record's current value is not offered). Every value comes
from executing the walk: the key and the carried amount are bound to the listing that found them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.manifest import ColumnDef, ToolDef
from orchestrator.models import StepCondition
from orchestrator.tasks.archetypes import ARCHETYPES
from orchestrator.tasks.paths import get_path
from orchestrator.tasks.scenario.recipes import Archetype, a_or_an
from orchestrator.tasks.scenario.scene import Records, Scene
from orchestrator.tasks.scenario.world import Table, World, is_day

__all__ = ["Act", "acts_for"]


@dataclass(frozen=True)
class Act:
    """One way to act on a row of ``table``: a transition tool, or a create of ``child`` referencing it."""

    table: Table
    tool: ToolDef
    verb: str
    key_arg: str
    #: anchored create: the child table, and (child column <- record column) values carried over
    child: Table | None = None
    ref_column: str | None = None
    carry: dict[str, str] = field(default_factory=dict)
    refuses: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    requires: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def applies(self, row: dict[str, Any]) -> bool:
        """Whether the record's current state allows the act (a transition refuses a row already in it)."""
        for path, values in self.refuses.items():
            if get_path(row, path) in values:
                return False
        for path, values in self.requires.items():
            if get_path(row, path) not in values:
                return False
        return all(row.get(source) is not None for source in self.carry.values())


def acts_for(world: World, table: Table) -> list[Act]:
    """The acts a record table offers (found once per table and shared)."""
    key = ("acts", *table.key)
    if key not in world.derived:
        world.derived[key] = _transitions(world, table) + _anchored(world, table)
    acts: list[Act] = world.derived[key]
    return acts


def _fillable(tool: ToolDef, table: Table, given: set[str]) -> bool:
    """Every required argument is given, or maps to a column of the record acted on (its scope: an account,
    a list), which the call copies from the record."""
    columns = {c.name for c in table.entity.columns}
    for name in tool.input_schema.get("required") or []:
        if name in given:
            continue
        if tool.arg_columns.get(name) not in columns:
            return False
    return True


def _transitions(world: World, table: Table) -> list[Act]:
    out: list[Act] = []
    runtime = world.runtimes[table.service]
    for tool in runtime.manifest.tools:
        action = tool.action
        if tool.kind != "write" or action is None or action.kind != "transition":
            continue
        if runtime.tools[tool.name].backend != "action":  # bound to the table's rows
            continue
        if action.target != table.entity.name or not tool.pk_arg or not action.sets:
            continue
        if not _fillable(tool, table, {tool.pk_arg}):
            continue
        out.append(
            Act(
                table,
                tool,
                action.verb.lower(),
                tool.pk_arg,
                refuses={p: tuple(v) for p, v in action.refuses.items()},
                requires={p: tuple(v) for p, v in action.requires.items()},
            )
        )
    return out


def _anchored(world: World, table: Table) -> list[Act]:
    out: list[Act] = []
    money = table.money_columns()
    for child in world.of_service(table.service):
        tool = child.creator
        if child is table or tool is None:
            continue
        ref_arg, ref_column = _reference(child, tool, table)
        if ref_arg is None or ref_column is None:
            continue
        carry: dict[str, str] = {}
        for name in tool.input_schema.get("required") or []:
            column = child.entity.column(tool.arg_columns.get(name, ""))
            if name == ref_arg or column is None:
                continue
            if _is_money(column) and money:
                carry[column.name] = money[0].name
        if not carry:  # a row that restates nothing of the record (an empty child) is not worth asking for
            continue
        if not _fillable(tool, table, {ref_arg, *(a for a, c in tool.arg_columns.items() if c in carry)}):
            continue
        out.append(Act(table, tool, child.noun, ref_arg, child, ref_column, carry))
    return out


def _reference(child: Table, tool: ToolDef, parent: Table) -> tuple[str | None, str | None]:
    """The required argument of a create that names a row of ``parent``, and the child column it fills."""
    for name in tool.input_schema.get("required") or []:
        column = child.entity.column(tool.arg_columns.get(name, ""))
        semantic = tool.arg_semantics.get(name) or (column.semantic if column is not None else None) or ""
        target = (column.ref if column is not None else None) or (
            semantic[3:] if semantic.startswith("id:") else ""
        )
        if target == parent.entity.name and column is not None:
            return name, column.name
    return None, None


def _is_money(column: ColumnDef) -> bool:
    return column.type in ("number", "integer") and (column.semantic or "") in ("money", "amount", "price")


# -- picking the record ----------------------------------------------------------------------

Pick = tuple[str, str, dict[str, Any], list[Any], ColumnDef]


def _picks(table: Table, rows: tuple[dict[str, Any], ...]) -> list[Pick]:
    """Rules that single out one of the person's records: (how it is said, what to ask, the row, rivals, column)."""
    out: list[Pick] = []
    if len(rows) < 2:
        return out
    for column in table.money_columns():
        values = [r.get(column.name) for r in rows]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            continue
        top = max(values)  # type: ignore[type-var]
        if values.count(top) == 1:
            words = column.name.replace("_", " ")
            out.append((f"the one with the largest {words}", words, rows[values.index(top)], values, column))
        break
    for column in table.date_columns():
        days = [str(r.get(column.name))[:10] for r in rows]
        if not all(is_day(r.get(column.name)) for r in rows) or days.count(max(days)) != 1:
            continue
        out.append(("the most recent one", "date", rows[days.index(max(days))], days, column))
        break
    return out


def _options(world: World, table: Table, rows: tuple[dict[str, Any], ...]) -> list[tuple[Pick, Act]]:
    return [(p, a) for p in _picks(table, rows) for a in acts_for(world, table) if a.applies(p[2])]


def _past(verb: str) -> str:
    """'cancelled', 'captured', 'retried', 'closed'."""
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    if verb.endswith("el"):
        return verb + "led"
    return verb + "ed"


async def _perform(
    scene: Scene, current: Records, row: dict[str, Any], act: Act, condition: StepCondition | None = None
) -> tuple[str, str]:
    """Run one act on the found row (unless a condition rules it out); what it asks for, and how a person
    refers to it afterwards ("you cancelled", "you added a refund for")."""
    draft, table = scene.draft, current.table
    key, ref = row.get(table.pk), current.found.ref(row, table.pk)
    if act.child is None:
        args: dict[str, Any] = {act.key_arg: key}
        for name in act.tool.input_schema.get("required") or []:  # the row's own scope (an account)
            own = act.tool.arg_columns.get(name)
            if name not in args and own is not None and row.get(own) is not None:
                args[name] = row[own]
        await draft.call(table.service, act.tool, args, {act.key_arg: ref}, condition)
        return f"{act.verb} it", f"you {_past(act.verb)}"
    assert act.ref_column is not None
    values = {act.ref_column: key, **{c: row.get(src) for c, src in act.carry.items()}}
    binds = {act.ref_column: ref, **{c: current.found.ref(row, src) for c, src in act.carry.items()}}
    await draft.create(act.child, values, binds, condition, scope_row=row)
    full = ""
    if act.carry:
        full = f" for its full {next(iter(act.carry.values())).replace('_', ' ')}"
        if condition is None or condition.taken:
            draft.labels.add("data transformation")
    return (
        f"add {a_or_an(act.verb)} for it in {scene.system(table)}{full}",
        f"you added {a_or_an(act.verb)} for",
    )


def _report(scene: Scene, table: Table, pick: Pick, done: str) -> None:
    """The answer the act's report asks for (the picked record's amount or date); the table is now acted on."""
    scene.acted.add(table.key)
    _, ask, row, rivals, column = pick
    value = row.get(column.name)
    what = f"{column.name} of the {table.noun} acted on"
    if ask == "date":
        asked = scene.draft.answer(what, str(value)[:10], semantic="date")
    else:
        asked = scene.draft.answer(what, value, rivals=rivals)
    if asked:
        scene.asks.append(f"the {ask} of the {table.noun} {done}")
    scene.draft.labels |= {"ranking", "write"}


async def _act(scene: Scene) -> None:
    world, draft = scene.world, scene.draft
    current = await scene.use_records(
        lambda t, rows: t.key not in scene.acted and bool(_options(world, t, rows))
    )
    table = current.table
    pick, act = draft.rng.choice(_options(world, table, current.rows))
    await scene.open_record(pick[2])  # a person opens the record they picked before acting on it
    ask, done = await _perform(scene, current, pick[2], act)
    # and, where the act changes the record itself, opens it again to see that it took
    checked = act.child is None and await scene.open_record(pick[2])
    lead = f"Go through their {table.noun}s in {scene.system(table)} and find {pick[0]}."
    after = f" and open it again to check that it now shows as {_past(act.verb)}" if checked else ""
    scene.sentences.append(f"{lead} Then {ask}{after}.")
    _report(scene, table, pick, done)


def _rule_phrase(act: Act) -> str:
    """What the house rule says happens to a record: 'are cancelled', 'get a refund for their full amount'."""
    if act.child is None:
        return f"are {_past(act.verb)}"
    full = f" for their full {next(iter(act.carry.values())).replace('_', ' ')}" if act.carry else ""
    return f"get {a_or_an(act.verb)}{full}"


def _thresholds(value: float) -> list[float]:
    """Round amounts within a factor of ten of a value (never the value itself): 50, 100, 250, 500, ..."""
    out = [k * 10**m for m in range(0, 9) for k in (1, 2.5, 5)]
    return [t for t in out if value / 10 <= t <= value * 10 and abs(t - value) > 0.005]


def _ruled(world: World, table: Table, rows: tuple[dict[str, Any], ...]) -> list[tuple[Pick, Act, Act]]:
    """(pick, act at or above the threshold, act below it): two different acts the picked record allows."""
    out: list[tuple[Pick, Act, Act]] = []
    money = next(iter(table.money_columns()), None)
    if money is None:
        return out
    for pick in _picks(table, rows):
        amount = pick[2].get(money.name)
        if not isinstance(amount, (int, float)) or isinstance(amount, bool) or not _thresholds(float(amount)):
            continue
        usable = [a for a in acts_for(world, table) if a.applies(pick[2])]
        out += [(pick, a, b) for a in usable for b in usable if a.tool.name != b.tool.name]
    return out


async def _act_by_rule(scene: Scene) -> None:
    """The record is found by a rule, and a house rule on its amount decides which of two acts it gets."""
    world, draft = scene.world, scene.draft
    current = await scene.use_records(
        lambda t, rows: t.key not in scene.acted and bool(_ruled(world, t, rows))
    )
    table, rng = current.table, draft.rng
    pick, high_act, low_act = rng.choice(_ruled(world, table, current.rows))
    await scene.open_record(pick[2])  # its amount decides: a person opens the record to read it
    money = table.money_columns()[0]
    amount = float(pick[2][money.name])
    above = [t for t in _thresholds(amount) if t < amount]
    below = [t for t in _thresholds(amount) if t > amount]
    threshold = rng.choice(rng.choice([side for side in (above, below) if side]))
    taken = amount >= threshold
    source = current.found.ref(pick[2], money.name)
    high = StepCondition(source=source, op="gt", value=threshold - 0.005, taken=taken)
    low = StepCondition(source=source, op="lt", value=threshold - 0.005, taken=not taken)
    ask_high, done_high = await _perform(scene, current, pick[2], high_act, high)
    ask_low, done_low = await _perform(scene, current, pick[2], low_act, low)
    noun, words = table.noun, money.name.replace("_", " ")
    shown = f"{threshold:,.2f}" if not float(threshold).is_integer() else f"{int(threshold):,}"
    scene.rules.append(
        f"{noun}s with {a_or_an(words)} of {shown} or more {_rule_phrase(high_act)}; smaller ones "
        f"{_rule_phrase(low_act)}"
    )
    draft.stated.append(threshold)
    lead = f"Go through their {noun}s in {scene.system(table)} and find {pick[0]}."
    scene.sentences.append(f"{lead} If the rule applies, {ask_high}; if it does not, {ask_low} instead.")
    _report(scene, table, pick, done_high if taken else done_low)
    draft.labels.add("conditional")


def _fits(world: World, table: Table, rows: tuple[dict[str, Any], ...]) -> bool:
    return bool(_options(world, table, rows))


def _fits_rule(world: World, table: Table, rows: tuple[dict[str, Any], ...]) -> bool:
    return bool(_ruled(world, table, rows))


for _archetype in (
    Archetype(
        "act", ("act",), _act, "find one record by a rule and act on it (cancel it, refund it)", _fits, True
    ),
    Archetype(
        "act_by_rule",
        ("act",),
        _act_by_rule,
        "find one record; a house rule on its amount decides which of two acts it gets",
        _fits_rule,
        True,
    ),
):
    ARCHETYPES.register(_archetype.name, _archetype)
