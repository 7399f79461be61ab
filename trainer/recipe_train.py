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

__all__ = ["GrpoStats", "SftExample", "grpo_update", "sft_examples", "sft_step"]


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
    clip_ratio: float = 0.2,
    vocab: ActionVocab | None = None,
) -> GrpoStats:
    """``epochs`` PPO-clip updates on the batch (old log-probs: the policy that sampled it)."""
    adv = grpo_advantages([e.reward for e in episodes], [e.group_id for e in episodes])
    signal = {e.group_id for e, a in zip(episodes, adv, strict=True) if abs(a) > 1e-9}
    usable = [(e, a) for e, a in zip(episodes, adv, strict=True) if e.trained_tokens and abs(a) > 1e-9]
    if not usable:
        return GrpoStats(loss=0.0, entropy=0.0, trained_tokens=0, groups_with_signal=0)
    seqs = [e.prompt_ids + e.response_ids for e, _ in usable]
    targets = [[len(e.prompt_ids) + j for j, m in enumerate(e.mask) if m] for e, _ in usable]
    device = model.device
    advantages = torch.cat(
        [torch.full((len(t),), a, device=device) for t, (_, a) in zip(targets, usable, strict=True)]
    )
    ones = torch.ones_like(advantages)
    old: torch.Tensor | None = None
    first_loss, entropy = 0.0, 0.0
    for epoch in range(max(1, epochs)):
        stats = token_stats(model, seqs, targets, with_grad=True, vocab=vocab)
        logp = torch.cat([s.logprobs for s in stats])
        if old is None:
            old = logp.detach()
            entropy = float(torch.cat([s.entropy for s in stats]).mean())
        loss = ppo_clip_loss(logp, old, advantages, ones, clip_ratio=clip_ratio)
        optim.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        if epoch == 0:
            first_loss = float(loss.item())
    return GrpoStats(
        loss=first_loss, entropy=entropy, trained_tokens=int(ones.numel()), groups_with_signal=len(signal)
    )
