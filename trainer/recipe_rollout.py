"""Batched multi-turn rollouts of the recipe against the orchestrator's HTTP API.

Every episode of a step is open at once; each turn samples the next assistant message of every
live episode in one batch (``trainer.policy.generate_batch``, one KV cache), then sends the turns'
tool calls to the orchestrator concurrently, one ``/step`` per turn as verl's agent loop does.
Tool results come back as the chat template's observation tokens (masked out of the loss). An
episode ends when the policy answers without a call, the orchestrator says it is done, or
``max_turns`` is reached; it is then finished (graded), released, and reported to its group on the
reward board, which returns the Completion-Focused Rubric Reward.

An episode the environment breaks (the orchestrator unreachable or answering an error, or a step
whose answer blames the environment: ``trainer.env_errors.step_environment_error``) is aborted:
reported to its group as aborted, its reward 0 and **its tokens masked out of the loss**.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from orchestrator.client import OrchestratorClient, OrchestratorError
from trainer.action_vocab import ActionVocab
from trainer.env_errors import step_environment_error
from trainer.policy import MAX_POSITIONS, generate_batch
from trainer.tokenizer import answer_text
from trainer.turns import observation_ids, parse_tool_calls

__all__ = ["Episode", "SamplingOptions", "play_episodes", "policy_view"]


@dataclass
class SamplingOptions:
    """How the policy plays: exposure mode, turn and token limits, temperature, reward wait."""

    mode: str = "gateway"
    short_prompt: bool = True  # the policy's context omits the constant system prompt and tool listing
    max_turns: int = 3
    max_new_tokens: int = 96
    temperature: float = 1.0
    group_timeout_s: float = 60.0


@dataclass
class Episode:
    """One rollout: its tokens, which of them the policy wrote (mask 1), and its outcome."""

    task_id: str
    group_id: str
    rollout_idx: int
    episode_id: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    answer: str = ""
    tool_calls: int = 0
    verdicts: list[bool] = field(default_factory=list)
    importance: list[float] = field(default_factory=list)
    env_error: str = ""
    reward: float = 0.0
    completion: float = 0.0
    done: bool = False

    @property
    def trained_tokens(self) -> int:
        return 0 if self.env_error else sum(self.mask)


def policy_view(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, short: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """What the policy reads of a conversation: all of it, or (short) without the system prompt and tools.

    The system prompt and the gateway's four tool schemas are the same for every task (~800
    tokens); the short view keeps only what differs (instruction, calls, results), for a tiny
    policy that learns the tools from its SFT data. Both the SFT examples and the rollouts use it.
    """
    if not short:
        return messages, tools
    return [m for m in messages if m.get("role") != "system"], None


async def _open(
    client: OrchestratorClient, tok: Any, ep: Episode, opts: SamplingOptions, budget: int
) -> None:
    opened = await client.open_episode(
        ep.task_id, mode=opts.mode, group_id=ep.group_id, rollout_idx=ep.rollout_idx
    )
    ep.episode_id = opened.episode_id
    messages, tools = policy_view(opened.messages, opened.tools, opts.short_prompt)
    ep.tools = tools or []
    ep.prompt_ids = list(
        tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True)["input_ids"]
    )
    mode = opts.mode
    if len(ep.prompt_ids) + budget > MAX_POSITIONS:
        from trainer.env_errors import PromptTooLongError

        raise PromptTooLongError(
            f"task {ep.task_id}: the {mode} prompt is {len(ep.prompt_ids)} tokens, and with {budget} "
            f"response tokens it exceeds the tiny model's {MAX_POSITIONS} positions; use gateway mode"
        )


async def _guard(ep: Episode, call: Any) -> Any:
    """Run one orchestrator call for ``ep``; an orchestrator failure aborts the episode (environment)."""
    try:
        return await call
    except OrchestratorError as exc:
        ep.env_error, ep.done = ep.env_error or str(exc)[:500], True
        return None


async def _step(client: OrchestratorClient, tok: Any, ep: Episode, calls: list[dict[str, Any]]) -> None:
    step = await _guard(ep, client.step(ep.episode_id, calls, assistant_content=ep.answer or None))
    if step is None:
        return
    ep.tool_calls += len(calls)
    blamed = step_environment_error(step)
    if blamed:
        ep.env_error, ep.done = blamed, True
        return
    if not step.results:  # the episode ended (a limit) before the calls ran
        ep.done = True
        return
    msgs = [
        {"role": "tool", "tool_call_id": r.tool_call_id, "name": r.name, "content": r.content}
        for r in step.results
    ]
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    newline = tok.encode("\n", add_special_tokens=False)
    boundary = newline if ep.response_ids and ep.response_ids[-1] == im_end else [im_end, *newline]
    obs = boundary + observation_ids(tok, msgs, ep.tools or None)
    ep.response_ids += obs
    ep.mask += [0] * len(obs)
    ep.done = bool(step.done)


async def _finish(client: OrchestratorClient, ep: Episode, importance: dict[str, list[float]]) -> None:
    if not ep.env_error:
        fin = await _guard(ep, client.finish(ep.episode_id, ep.answer))
        if fin is not None:
            if fin.environment_error:
                ep.env_error = fin.environment_error[:500]
            ep.verdicts = [c.passed for c in fin.criteria]
            ep.importance = fin.importance(importance.get(ep.task_id))
    if ep.episode_id:
        with contextlib.suppress(OrchestratorError):  # else reaped after its TTL; the outcome is known
            await client.release(ep.episode_id)


async def _reward(client: OrchestratorClient, ep: Episode, group_n: int, timeout_s: float) -> None:
    try:
        got = await client.group_reward(
            ep.group_id,
            ep.episode_id or f"unopened-{ep.group_id}-{ep.rollout_idx}",
            ep.verdicts,
            expected_n=group_n,
            timeout_s=timeout_s,
            importance=ep.importance or None,
            aborted=bool(ep.env_error),
        )
    except OrchestratorError as exc:
        ep.env_error = ep.env_error or f"group board: {exc}"[:500]
        return
    ep.reward = 0.0 if ep.env_error else got.reward
    ep.completion = float(bool(ep.verdicts) and all(ep.verdicts) and not ep.env_error)


async def play_episodes(
    client: OrchestratorClient,
    model: Any,
    tok: Any,
    episodes: Sequence[Episode],
    opts: SamplingOptions,
    *,
    vocab: ActionVocab | None = None,
    importance: dict[str, list[float]] | None = None,
    generator: torch.Generator | None = None,
) -> None:
    """Play every episode to its end (batched turns), grade it, and fill in its group reward."""
    budget = opts.max_turns * opts.max_new_tokens
    opened = await asyncio.gather(
        *(_guard(ep, _open(client, tok, ep, opts, budget)) for ep in episodes), return_exceptions=True
    )
    for result in opened:
        if isinstance(result, BaseException):
            raise result  # a prompt that does not fit: configuration, not a rollout failure
    im_end, pad = tok.convert_tokens_to_ids("<|im_end|>"), tok.pad_token_id
    for turn in range(opts.max_turns):
        live = [ep for ep in episodes if not ep.done]
        if not live:
            break
        gens = generate_batch(
            model,
            [ep.prompt_ids + ep.response_ids for ep in live],
            max_new_tokens=opts.max_new_tokens,
            stop_ids=[im_end, pad],
            pad_id=pad,
            temperature=opts.temperature,
            generator=generator,
            vocab=vocab,
        )
        pending = []
        for ep, gen in zip(live, gens, strict=True):
            ep.response_ids += gen
            ep.mask += [1] * len(gen)
            ep.answer = answer_text(tok, gen)
            calls = parse_tool_calls(tok.decode(gen, skip_special_tokens=False), turn)
            if not calls or turn == opts.max_turns - 1:
                ep.done = True
            else:
                pending.append(_step(client, tok, ep, calls))
        await asyncio.gather(*pending)
    await asyncio.gather(*(_finish(client, ep, importance or {}) for ep in episodes))
    sizes: dict[str, int] = {}
    for ep in episodes:
        sizes[ep.group_id] = sizes.get(ep.group_id, 0) + 1
    await asyncio.gather(*(_reward(client, ep, sizes[ep.group_id], opts.group_timeout_s) for ep in episodes))
