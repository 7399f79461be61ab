"""Answer criteria: the final report states what the workflow produced, computed or decided.

``answer_value`` holds a value fixed when the task was built (a total, a count, a date,
which branch was taken); ``answer_row_field`` reads its value from the final state (the
key or number the service gave the record the agent created), so a harmless retry that
shifts a generated id does not fail it. Both read the answer by type (``answers.states``)
and fail an answer that lists everything (``is_dump``) or that also states a rival: the
value a plausible wrong solution would have reported.
"""

from __future__ import annotations

from typing import Any

from orchestrator.rubric.answers import AnswerKind, CodeType, any_stated, is_dump, rivals_excluding, states
from orchestrator.rubric.base import Check, Criterion, StateReader, register_criterion
from orchestrator.rubric.rows import new_rows, row_matches

__all__ = ["AnswerRowField", "AnswerValue", "judge_answer"]


def judge_answer(
    answer: str,
    value: Any,
    kind: AnswerKind,
    code_type: CodeType | None,
    rivals: list[Any],
    asked: int,
    what: str,
) -> Check:
    """The shared verdict: not a dump, states ``value``, states no rival."""
    if is_dump(answer, asked):
        return Check(False, f"the answer lists far more values than the {asked} asked for")
    if not states(answer, value, kind, code_type):
        return Check(False, f"the answer does not state {what} {value!r}")
    rival = any_stated(answer, rivals_excluding(value, rivals, kind), kind, code_type)
    if rival is not None:
        return Check(False, f"the answer states {what} {value!r} but also {rival!r}")
    return Check(True, f"the answer states {what} {value!r}")


@register_criterion("answer_value")
class AnswerValue(Criterion):
    """The answer states ``value`` read as ``read_as`` (and none of its ``rivals``)."""

    needs_service = False
    value: Any
    read_as: AnswerKind = "text"
    code_type: CodeType | None = None
    rivals: list[Any] = []
    asked: int = 1
    source: str | None = None
    what: str = ""

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        return judge_answer(
            answer, self.value, self.read_as, self.code_type, self.rivals, self.asked, self.what
        )

    def describe(self, service: str | None) -> str:
        return f"the answer states {self.what + ' ' if self.what else ''}{self.value!r}"


@register_criterion("answer_row_field")
class AnswerRowField(Criterion):
    """The answer states ``field`` of the new ``table`` row holding ``where`` (read from the final state)."""

    table: str
    pk: str
    where: dict[str, Any]
    field: str
    read_as: AnswerKind = "text"
    asked: int = 1
    what: str = ""

    async def check(self, reader: StateReader, service: str | None, answer: str) -> Check:
        rows = [
            r
            for r in await new_rows(reader, service or "", self.table, self.pk)
            if row_matches(r, self.where)
        ]
        if not rows:
            return Check(False, f"no new {self.table} row to report {self.field} of")
        values = [r.get(self.field) for r in rows if r.get(self.field) is not None]
        for value in values:
            verdict = judge_answer(answer, value, self.read_as, None, [], self.asked, self.what or self.field)
            if verdict.passed:
                return verdict
        return Check(
            False,
            f"the answer does not state the new {self.table}'s {self.field} ({values[0]!r})"
            if values
            else f"the new {self.table} has no {self.field}",
        )

    def describe(self, service: str | None) -> str:
        return f"the answer states the {self.field} of the new {self.table} in {service}"
