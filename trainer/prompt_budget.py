"""How many tokens an episode's opening prompt takes, so a too-long one is refused at export.

verl left-truncates a prompt over ``data.max_prompt_length`` without a word, and the exported
parquet row carries only the system prompt and the instruction: the tool schemas the episode
adds (every tool of the task's services and distractors in ``direct`` / ``mcp`` mode) are not in
it, so verl's own length filter cannot see them. ``prompt_lengths`` renders what the agent loop
will render at open - the orchestrator's prompt and the episode's exposed tools through the
tokenizer's chat template, with the generation prompt - and ``over_budget`` names the tasks that
would not fit. The tools are built the way ``orchestrator.episodes`` opens an episode (services,
then distractors, in the episode's seeded order for ``seed``); another seed only reorders them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compoworld.runtime import ServiceRuntime
from compoworld.seeding import seeded_rng
from compoworld.settings import Settings
from orchestrator.exposure import ToolRef, build_exposure, tool_refs
from orchestrator.models import Task
from orchestrator.prompts import PromptMode, build_prompt
from trainer.env_errors import PromptTooLongError

__all__ = [
    "PromptBudget",
    "PromptLength",
    "episode_tools",
    "library_schemas",
    "over_budget",
    "prompt_lengths",
    "refuse_over_budget",
]


@dataclass(frozen=True)
class PromptLength:
    """One task's opening prompt: its token count and how many tool schemas it carries."""

    task_id: str
    tokens: int
    n_tools: int


def episode_tools(
    task: Task, mode: PromptMode, schemas: Mapping[str, list[dict[str, Any]]], seed: int = 0
) -> list[dict[str, Any]]:
    """The tool schemas an episode of ``task`` exposes (``schemas``: each service's ``GET /tools``)."""
    services = list(dict.fromkeys([*task.services, *task.distractors]))
    missing = [s for s in services if s not in schemas]
    if missing:
        raise ValueError(f"task {task.id}: services {missing} are not in the library")
    refs: dict[str, list[ToolRef]] = {svc: tool_refs(svc, schemas[svc]) for svc in services}
    rng = seeded_rng("episode", task.id, seed)
    rng.shuffle(services)
    return list(build_exposure(mode, services, refs, rng).tools)


def prompt_lengths(
    tasks: Iterable[Task], mode: PromptMode, schemas: Mapping[str, list[dict[str, Any]]], tokenizer: Any
) -> list[PromptLength]:
    """Token count of every task's opening prompt as the agent loop renders it."""
    out = []
    for task in tasks:
        tools = episode_tools(task, mode, schemas)
        ids = tokenizer.apply_chat_template(
            build_prompt(task, mode), tools=tools, add_generation_prompt=True, tokenize=True
        )
        if isinstance(ids, Mapping):  # transformers 5 returns a BatchEncoding by default
            ids = ids["input_ids"]
        out.append(PromptLength(task_id=task.id, tokens=len(ids), n_tools=len(tools)))
    return out


def over_budget(lengths: Iterable[PromptLength], limit: int) -> list[PromptLength]:
    """The prompts longer than ``limit`` tokens, longest first."""
    return sorted((p for p in lengths if p.tokens > limit), key=lambda p: -p.tokens)


def refuse_over_budget(lengths: list[PromptLength], limit: int, mode: PromptMode) -> None:
    """Raise ``PromptTooLongError`` naming the tasks whose prompt exceeds ``limit`` tokens."""
    over = over_budget(lengths, limit)
    if not over:
        return
    worst = ", ".join(f"{p.task_id} ({p.tokens} tokens, {p.n_tools} tools)" for p in over[:3])
    raise PromptTooLongError(
        f"{len(over)} of {len(lengths)} {mode}-mode prompts exceed the prompt budget of {limit} tokens "
        f"(data.max_prompt_length), longest: {worst}; verl would cut them from the left. Export with "
        "--mode gateway (four meta-tools, about 800 tokens) or raise --max-prompt-length to match "
        "data.max_prompt_length."
    )


def library_schemas(library: Path, services: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """``GET /tools`` schemas of the named services of ``library`` (only those folders are loaded)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(set(services)):
        folder = library / name
        if not (folder / "manifest.json").is_file():
            raise ValueError(f"service {name!r} is not in the library {library} (no {folder}/manifest.json)")
        out[name] = ServiceRuntime.from_folder(folder, Settings.defaults()).tool_schemas()  # schemas only
    return out


@dataclass(frozen=True)
class PromptBudget:
    """The most prompt tokens a row may open with, and what measures them."""

    limit: int
    tokenizer: Any
    schemas: Mapping[str, list[dict[str, Any]]]

    def check(self, tasks: Sequence[Task], mode: PromptMode) -> list[PromptLength]:
        """Every task's prompt length; ``PromptTooLongError`` if any exceeds the limit."""
        lengths = prompt_lengths(tasks, mode, self.schemas, self.tokenizer)
        refuse_over_budget(lengths, self.limit, mode)
        return lengths
