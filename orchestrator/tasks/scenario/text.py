"""The request a colleague would write: frame, the work, the house rules, and what to report back.

Offline the template is the instruction; phrasings vary by vertical and by seed. It states names,
titles and thresholds, never an internal key, a tool name or a value the agent has to look up
(``leaks``). With an LLM endpoint a rewrite replaces it only if every stated value survives
(``missing``) and nothing hidden appears; otherwise the template stays.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compoworld.llm import LLMClient
from orchestrator.rubric.normalize import normalize_text, numbers_in, value_text

__all__ = ["Instruction", "Paraphraser", "TermIndex", "compose", "internal_terms", "leaks", "missing"]

_RULE_LEADS = ("House rule: {rule}.", "Remember our policy: {rule}.", "As always, {rule}.")
_ASK_LEADS = (
    "When you're done, reply with {asks}.",
    "Finish by telling me {asks}.",
    "In your reply, give me {asks}.",
)


@dataclass
class Instruction:
    """Rendered text plus the values it must state and the values it must not."""

    text: str
    required: list[Any] = field(default_factory=list)
    hidden: list[Any] = field(default_factory=list)


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def compose(
    rng: random.Random, frame: str, sentences: Sequence[str], rules: Sequence[str], asks: Sequence[str]
) -> str:
    """Frame, the work, one line per house rule, and the report asked for."""
    parts = [frame, *sentences]
    for rule in rules:
        parts.append(rng.choice(_RULE_LEADS).format(rule=rule))
    if asks:
        parts.append(rng.choice(_ASK_LEADS).format(asks=_join(list(asks))))
    return " ".join(p.strip() for p in parts if p.strip())


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


_WORD = re.compile(r"[\w-]+")


_IDENTIFIER = re.compile(r"[_\-0-9]|[a-z][A-Z]")


def identifier_like(term: str) -> bool:
    """Whether a tool or service name reads as an identifier (``Search_payments``, ``getFolders``) rather
    than a plain word (a tool called ``delete`` or ``points``: the word itself is not a tell)."""
    return len(term) > 3 and _IDENTIFIER.search(term) is not None


class TermIndex:
    """Tool names and service slugs prepared once, to look for in many texts (a whole corpus has ~100k).

    A one-word term is found when it is one of the text's words; any other term only where its longest
    word is one of the text's words (it stands alone in the text exactly when the term does), so a text
    is checked against a handful of candidates, not every term.
    """

    def __init__(self, terms: Iterable[str]) -> None:
        self.order: dict[str, int] = {}
        self.words: set[str] = set()
        self.by_part: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for term in terms:
            if term in self.order:
                continue
            test = _term_test(term)
            if test is None:
                continue
            self.order[term] = len(self.order)
            if test is True:
                self.words.add(term)
            elif isinstance(test, re.Pattern):
                parts = _WORD.findall(term)
                self.by_part.setdefault(max(parts, key=len) if parts else "", []).append((term, test))

    def find(self, text: str) -> list[str]:
        """The terms the text contains (in the order they were given), then any id-shaped tokens."""
        words = set(_WORD.findall(text))
        found = [w for w in words if w in self.words]
        for word in [*words, ""]:
            found += [term for term, pattern in self.by_part.get(word, ()) if pattern.search(text)]
        found.sort(key=self.order.__getitem__)
        return found + re.findall(r"\b[a-z]{2,5}_[0-9a-z]{6,}\b", text)


def internal_terms(text: str, terms: Iterable[str] | TermIndex) -> list[str]:
    """Tool names, service slugs and id-shaped tokens the text contains (a person would not write them)."""
    index = terms if isinstance(terms, TermIndex) else TermIndex(terms)
    return index.find(text)


def _term_test(term: str) -> re.Pattern[str] | bool | None:
    """How ``internal_terms`` looks for a term: None when it is not identifier-like, True when it is one
    word, else the pattern that finds it standing alone."""
    if not identifier_like(term):
        return None
    if _WORD.fullmatch(term):
        return True
    return re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])")


class Paraphraser:
    """Rewrites a template instruction with an LLM; keeps the template when the rewrite loses or leaks a value."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.accepted = 0
        self.rejected = 0

    async def __call__(self, instruction: Instruction, seed: int) -> str:
        system = (
            "Rewrite the user's request so it reads like a colleague asking for help with a real piece of "
            "work in their business. Keep every quoted value, name and number exactly as written, keep "
            "every step, rule and the report asked for, add no new facts or values. Reply with the request only."
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
