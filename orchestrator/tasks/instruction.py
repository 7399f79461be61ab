"""The user's request, rendered from the walk: it states the goal and the starting facts, never the
values the agent has to look up on the way.

Offline the template is the instruction. With an LLM endpoint a paraphrase replaces it
only if every stated value survives and no hidden value appears; otherwise the template
stays. ``leaks`` and ``missing`` are the checks both paths go through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.llm import LLMClient
from compoworld.manifest import ServiceManifest
from compoworld.synth.naming import split_words
from orchestrator.graph.model import ToolNode
from orchestrator.models import WalkStep
from orchestrator.rubric.normalize import normalize_text, numbers_in, value_text
from orchestrator.tasks.paths import MISSING, get_arg, parse_step_ref

__all__ = ["Instruction", "Paraphraser", "leaks", "missing", "render_instruction"]

_OPS = {"eq": "is", "ne": "is not", "gt": "is greater than", "lt": "is less than"}


@dataclass
class Instruction:
    """Rendered text plus the values it must state and the values it must not."""

    text: str
    required: list[Any] = field(default_factory=list)
    hidden: list[Any] = field(default_factory=list)


def _words(name: str) -> str:
    return " ".join(split_words(name.rsplit(".", 1)[-1])) or name


def _quote(value: Any) -> str:
    text = value_text(value)
    return text if isinstance(value, (int, float)) and not isinstance(value, bool) else f"'{text}'"


class _Renderer:
    def __init__(
        self,
        steps: Sequence[WalkStep],
        nodes: Sequence[ToolNode],
        manifests: Mapping[str, ServiceManifest],
        aggregate: bool,
        rows: Sequence[Any] | None,
    ) -> None:
        self.aggregate = aggregate
        self.steps = steps
        self.nodes = nodes
        self.manifests = manifests
        self.required: list[Any] = []
        self.hidden: list[Any] = []
        self.alias: dict[int, int] = {}
        for i, row in enumerate(rows or []):
            first = next((j for j in range(i) if rows and rows[j] == row), None) if row is not None else None
            if first is not None:
                self.alias[i] = self.alias.get(first, first)
        groups: dict[tuple[str | None, bool], list[int]] = {}
        for i, node in enumerate(nodes):
            if i not in self.alias:
                groups.setdefault((node.entity, node.operation == "create"), []).append(i)
        self.ordinal: dict[int, str] = {}
        for members in groups.values():
            if len(members) > 1:
                for rank, i in enumerate(members):
                    self.ordinal[i] = ["first", "second", "third", "fourth", "fifth"][min(rank, 4)]

    def service(self, i: int) -> str:
        m = self.manifests.get(self.nodes[i].service)
        return (m.title or m.name) if m else self.nodes[i].service

    def noun(self, i: int) -> str:
        return _words(self.nodes[i].entity or self.nodes[i].tool)

    def ref(self, i: int) -> str:
        """How the task names the row step ``i`` produced: "the contact", "the new invoice", "the second event"."""
        i = self.alias.get(i, i)
        new = "new " if self.nodes[i].operation == "create" else ""
        ordinal = f"{self.ordinal[i]} " if i in self.ordinal else ""
        return f"the {ordinal}{new}{self.noun(i)}"

    def value(self, step: WalkStep, arg: str) -> str:
        provenance = step.bindings.get(arg, "literal")
        value = _get(step.arguments, arg)
        ref = parse_step_ref(provenance)
        if ref is not None:
            self.hidden.append(value)
            return f"{self.ref(ref[0])}'s {_words(ref[1])}"
        self.required.append(value)
        return _quote(value)

    def assignments(self, step: WalkStep, skip: str | None) -> str:
        names = sorted(
            _arg_names(step.arguments), key=lambda a: (not parse_step_ref(step.bindings.get(a, "")), a)
        )
        parts = [f"{_words(a)} set to {self.value(step, a)}" for a in names if a != skip]
        return _join(parts)

    def sentence(self, i: int) -> str:
        step, node = self.steps[i], self.nodes[i]
        tool = self.manifests[node.service].tool(node.tool) if node.service in self.manifests else None
        svc, noun = self.service(i), self.noun(i)
        pk = tool.pk_arg if tool else None
        names = _arg_names(step.arguments)
        if node.operation == "read" and pk in names:
            if parse_step_ref(step.bindings.get(pk, "")):
                return f"look up the {noun} in {svc} that {self.value(step, pk)} refers to"
            return f"look up the {noun} with {_words(pk)} {self.value(step, pk)} in {svc}"
        if node.operation in ("list", "search") and node.kind == "read":
            search = tool.search_arg if tool else None
            conds = [
                f"matching {self.value(step, a)}"
                if a == search
                else f"whose {_words(a)} is {self.value(step, a)}"
                for a in names
            ]
            many = i == len(self.steps) - 1 and self.aggregate
            what = f"all {noun}s" if many else f"the {noun}"
            return f"find {what} in {svc} {_join(conds)}"
        if node.operation == "create" and node.backend == "implemented":
            return f"create a new {noun} in {svc} with {self.assignments(step, None)}"
        if node.operation == "update" and pk in names:
            return f"update {self._target(i, pk)} in {svc}: {self.assignments(step, pk)}"
        if node.operation == "delete" and pk in names:
            return f"delete {self._target(i, pk)} from {svc}"
        action = _action_phrase(tool.description if tool else "", node.tool)
        return f"in {svc}, {action} with {self.assignments(step, None)}"

    def _target(self, i: int, pk: str) -> str:
        """The row a write names: a row found earlier ("the invoice"), or one stated by key."""
        step, noun = self.steps[i], self.noun(i)
        ref = parse_step_ref(step.bindings.get(pk, ""))
        if ref is not None and self.nodes[ref[0]].entity == self.nodes[i].entity:
            self.hidden.append(_get(step.arguments, pk))
            return self.ref(ref[0])
        if ref is None:
            return f"the {noun} {self.value(step, pk)}"
        return f"the {noun} that {self.value(step, pk)} names"

    def condition(self, i: int) -> str:
        cond = self.steps[i].condition
        assert cond is not None
        ref = parse_step_ref(cond.source)
        subject = f"{self.ref(ref[0])}'s {_words(ref[1])}" if ref else "the value"
        self.required.append(cond.value)
        return f"if {subject} {_OPS[cond.op]} {_quote(cond.value)}, "

    def answer(self, source: str, value: Any) -> str:
        self.hidden.append(value)
        kind, _, rest = source.partition(":")
        index_s, _, path = rest.partition(":")
        i = int(index_s)
        if kind == "count":
            return f"how many {self.noun(i)}s there are"
        if kind == "sum":
            return f"the total {_words(path)} of those {self.noun(i)}s"
        return f"{self.ref(i)}'s {_words(path)}"


def _get(args: dict[str, Any], name: str) -> Any:
    value = get_arg(args, name)
    return None if value is MISSING else value


def _arg_names(args: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for key, value in sorted(args.items()):
        if isinstance(value, dict):
            names += [f"{key}.{k}" for k in sorted(value)]
        else:
            names.append(key)
    return names


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _action_phrase(description: str, tool: str) -> str:
    """A verb phrase for a tool from the first line of its description: 'send a single email (with sendEmail)'."""
    plain = re.sub(r"<[^>]+>|[`*_#]", " ", description)
    first_line = next((line.strip() for line in plain.splitlines() if line.strip()), "")
    first = re.split(r"(?<=[.!?])\s", first_line, maxsplit=1)[0].rstrip(".:; ")
    if 3 <= len(first) <= 70 and not first.lower().startswith(("this ", "use this", "the ")):
        return f"{first[0].lower()}{first[1:]} (with {tool})"
    return f"call {tool}"


def render_instruction(
    steps: Sequence[WalkStep],
    nodes: Sequence[ToolNode],
    answers: Sequence[tuple[str, Any]],
    manifests: Mapping[str, ServiceManifest],
    aggregate: bool = False,
    rows: Sequence[Any] | None = None,
) -> Instruction:
    """The template instruction of a walk, one sentence per step, then what to report.

    ``rows`` (one identity per step, or None) lets two steps on the same row share one name.
    """
    r = _Renderer(steps, nodes, manifests, aggregate, rows)
    sentences: list[str] = []
    for i, step in enumerate(steps):
        text = r.sentence(i)
        if step.condition is not None:
            text = r.condition(i) + text + "; otherwise leave it as it is"
        prefix = "" if i == 0 else "Then "
        text = prefix + text if prefix else text[0].upper() + text[1:]
        sentences.append(text + ".")
    if answers:
        sentences.append("Finally, tell me " + _join([r.answer(s, v) for s, v in answers]) + ".")
    hidden = [h for h in r.hidden if not any(_same(h, q) for q in r.required)]
    return Instruction(" ".join(sentences), r.required, hidden)


def _same(a: Any, b: Any) -> bool:
    return normalize_text(value_text(a)) == normalize_text(value_text(b))


def _mentions(text: str, value: Any) -> bool:
    norm = normalize_text(text)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return any(abs(n - float(value)) < 1e-9 for n in numbers_in(text))
    needle = normalize_text(value_text(value))
    return bool(needle) and needle in norm


def missing(text: str, required: Sequence[Any]) -> list[Any]:
    """Stated values the text lost."""
    return [v for v in required if v is not None and not _mentions(text, v)]


def leaks(text: str, hidden: Sequence[Any]) -> list[Any]:
    """Hidden values the text gives away (short values and small numbers are too common to count)."""
    out = []
    for value in hidden:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)) and abs(float(value)) < 100 and float(value).is_integer():
            continue
        if isinstance(value, str) and len(value.strip()) < 4:
            continue
        if _mentions(text, value):
            out.append(value)
    return out


class Paraphraser:
    """Rewrites a template instruction with an LLM; keeps the template when the rewrite loses or leaks a value."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.accepted = 0
        self.rejected = 0

    async def __call__(self, instruction: Instruction, seed: int) -> str:
        system = (
            "Rewrite the user's request so it reads like a person asking an assistant. Keep every quoted value "
            "and every number exactly as written, keep every step and its order, add no new facts or values. "
            "Reply with the rewritten request only."
        )
        try:
            result = await self.client.chat(
                [{"role": "system", "content": system}, {"role": "user", "content": instruction.text}],
                seed=seed % 2**31,
            )
        except Exception:  # an LLM failure falls back to the template; the task stays valid
            self.rejected += 1
            return instruction.text
        text = (result.content or "").strip()
        if not text or missing(text, instruction.required) or leaks(text, instruction.hidden):
            self.rejected += 1
            return instruction.text
        self.accepted += 1
        return text
