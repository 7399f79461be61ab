"""The two updates of the recipe: SFT on the assistant tokens of SFT records, and a GRPO step.

SFT renders each record with the chat template and trains on the tokens the template marks as
the assistant's (``{% generation %}`` blocks: ``return_assistant_tokens_mask``), i.e. what TRL's
``assistant_only_loss`` trains on. GRPO uses verl's group-normalised advantage and token-mean
PPO-clip loss (trainer/grpo.py) over the tokens the policy wrote; an episode the environment
aborted contributes no token. Both return the loss they optimised.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainer.action_vocab import ActionVocab
from trainer.grpo import grpo_advantages, ppo_clip_loss
from trainer.policy import token_stats
from trainer.recipe_rollout import Episode, policy_view
from trainer.sft_format import SftRecord

__all__ = ["GrpoStats", "SftExample", "grpo_update", "replay_probability", "sft_examples", "sft_step"]


@dataclass(frozen=True)
class SftExample:
    """A rendered conversation and the positions of its assistant tokens."""

    ids: list[int]
    targets: list[int]


def sft_examples(tok: Any, records: Sequence[SftRecord], *, short: bool = False) -> list[SftExample]:
    """Render every record (in the policy's view) and keep where the template marks assistant tokens."""
    out = []
    for rec in records:
        messages, tools = policy_view(rec.messages, rec.tools, short)
        enc = tok.apply_chat_template(
            messages, tools=tools, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, marks = list(enc["input_ids"]), list(enc["assistant_masks"])
        targets = [i for i, m in enumerate(marks) if m and i > 0]
        if not targets:
            raise ValueError("the chat template marks no assistant token (no {% generation %} block)")
        out.append(SftExample(ids=ids, targets=targets))
    return out


def sft_step(
    model: Any,
    optim: Any,
    examples: Sequence[SftExample],
    *,
    batch_size: int,
    rng: random.Random,
    vocab: ActionVocab | None = None,
) -> float:
    """One optimizer step of token-mean cross-entropy on a random batch; returns that loss."""
    batch = rng.sample(list(examples), min(batch_size, len(examples)))
    stats = token_stats(
        model, [e.ids for e in batch], [e.targets for e in batch], with_grad=True, vocab=vocab
    )
    loss = -torch.cat([s.logprobs for s in stats]).mean()
    optim.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optim.step()
    return float(loss.item())


def replay_probability(
    model: Any, examples: Sequence[SftExample], *, vocab: ActionVocab | None = None, temperature: float = 1.0
) -> float:
    """The mean, over ``examples``, of the probability that the policy writes every assistant token
    of the example exactly (softmax of logits / ``temperature`` over ``vocab``: the sampling policy).

    For an oracle trajectory this is a lower bound on the policy's chance to reproduce it and so
    to succeed: the measure of a warm start's strength that a token-mean loss is not (a loss of
    0.01 over 200 tokens still fails one rollout in seven at T 1).
    """
    if not examples:
        return 0.0
    stats = token_stats(
        model,
        [e.ids for e in examples],
        [e.targets for e in examples],
        with_grad=False,
        vocab=vocab,
        temperature=temperature,
    )
    return sum(float(torch.exp(s.logprobs.sum())) for s in stats) / len(stats)


@dataclass(frozen=True)
class GrpoStats:
    """What one GRPO step did."""

    loss: float
    entropy: float
    trained_tokens: int
    groups_with_signal: int


def grpo_update(
    model: Any,
    optim: Any,
    episodes: Sequence[Episode],
    *,
    epochs: int = 1,
    mini_batches: int = 1,
    clip_ratio: float = 0.2,
    clip_ratio_low: float | None = None,
    clip_ratio_high: float | None = None,
    vocab: ActionVocab | None = None,
    temperature: float = 1.0,
) -> GrpoStats:
    """PPO-clip updates on the batch: ``epochs`` passes, each over ``mini_batches`` optimizer steps.

    As verl does with ``ppo_mini_batch_size``: advantages are normalised over each whole group
    first, mini-batches hold whole groups, and the old log-probs of every token are those of the
    policy that sampled the batch, taken once before the first step (not recomputed after one).
    The policy is softmax(logits / ``temperature``) over ``vocab``: pass the sampling temperature,
    as verl's actor divides its logits by the rollout temperature. ``clip_ratio_low`` and
    ``clip_ratio_high`` are verl's ``actor.clip_ratio_low/high`` (default: ``clip_ratio``).
    """
    adv = grpo_advantages([e.reward for e in episodes], [e.group_id for e in episodes])
    signal = {e.group_id for e, a in zip(episodes, adv, strict=True) if abs(a) > 1e-9}
    usable = [(e, a) for e, a in zip(episodes, adv, strict=True) if e.trained_tokens and abs(a) > 1e-9]
    if not usable:
        return GrpoStats(loss=0.0, entropy=0.0, trained_tokens=0, groups_with_signal=0)
    seqs = [e.prompt_ids + e.response_ids for e, _ in usable]
    targets = [[len(e.prompt_ids) + j for j, m in enumerate(e.mask) if m] for e, _ in usable]
    stats = token_stats(model, seqs, targets, with_grad=False, vocab=vocab, temperature=temperature)
    old = [s.logprobs.detach() for s in stats]
    entropy = float(torch.cat([s.entropy for s in stats]).mean())
    groups = list(dict.fromkeys(e.group_id for e, _ in usable))
    n_mb = max(1, min(mini_batches, len(groups)))
    batches = [
        [i for i, (e, _) in enumerate(usable) if groups.index(e.group_id) % n_mb == b] for b in range(n_mb)
    ]
    device = model.device
    losses: list[float] = []
    for _ in range(max(1, epochs)):
        for members in batches:
            cur = token_stats(
                model,
                [seqs[i] for i in members],
                [targets[i] for i in members],
                with_grad=True,
                vocab=vocab,
                temperature=temperature,
            )
            logp = torch.cat([s.logprobs for s in cur])
            old_lp = torch.cat([old[i] for i in members])
            advantages = torch.cat(
                [torch.full((len(targets[i]),), usable[i][1], device=device) for i in members]
            )
            loss = ppo_clip_loss(
                logp,
                old_lp,
                advantages,
                torch.ones_like(advantages),
                clip_ratio=clip_ratio,
                clip_ratio_low=clip_ratio_low,
                clip_ratio_high=clip_ratio_high,
            )
            optim.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            losses.append(float(loss.item()))
    return GrpoStats(
        loss=sum(losses[:n_mb]) / n_mb,
        entropy=entropy,
        trained_tokens=sum(len(t) for t in targets),
        groups_with_signal=len(signal),
    )
