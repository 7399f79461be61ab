"""GRPO pieces in plain torch, matching verl 0.9.1's defaults, for the smoke run.

verl's ``compute_grpo_outcome_advantage`` (norm_adv_by_std_in_grpo=True) and its PPO-clip policy
loss with ``loss_agg_mode="token-mean"``: the smoke run trains with the same numbers a verl run
would compute from the same rewards, without Ray or vLLM.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import torch

__all__ = ["grpo_advantages", "ppo_clip_loss"]


def grpo_advantages(rewards: Sequence[float], group_ids: Sequence[str], eps: float = 1e-6) -> list[float]:
    """(r - mean_group) / (std_group + eps); a group of one gets mean 0 and std 1, as in verl."""
    if len(rewards) != len(group_ids):
        raise ValueError("rewards and group_ids must have the same length")
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(group_ids):
        by_group[g].append(i)
    out = [0.0] * len(rewards)
    for members in by_group.values():
        scores = torch.tensor([float(rewards[i]) for i in members], dtype=torch.float64)
        if len(members) == 1:
            mean, std = torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64)
        else:
            mean, std = scores.mean(), scores.std()  # unbiased, like torch.std in verl
        for i, a in zip(members, ((scores - mean) / (std + eps)).tolist(), strict=True):
            out[i] = a
    return out


def ppo_clip_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_ratio: float = 0.2,
) -> torch.Tensor:
    """Token-mean PPO-clip loss over the masked (model-generated) tokens of a flat batch."""
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio)
    per_token = torch.maximum(unclipped, clipped)
    denom = mask.sum().clamp(min=1.0)
    return (per_token * mask).sum() / denom
