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
    *,
    clip_ratio_low: float | None = None,
    clip_ratio_high: float | None = None,
    clip_ratio_c: float = 3.0,
) -> torch.Tensor:
    """Token-mean PPO-clip loss over the masked (model-generated) tokens of a flat batch.

    verl's ``compute_policy_loss_vanilla``: the ratio is clipped to ``[1 - low, 1 + high]``
    (each defaults to ``clip_ratio``; a larger ``high`` is DAPO's clip-higher, which keeps
    unlikely tokens that earned a positive advantage from being clipped away), and a token with a
    negative advantage loses at most ``clip_ratio_c`` times its advantage (dual-clip PPO). The
    log-ratio is clamped to [-20, 20] before ``exp``, as verl does.
    """
    low = clip_ratio if clip_ratio_low is None else clip_ratio_low
    high = clip_ratio if clip_ratio_high is None else clip_ratio_high
    if low < 0 or high < 0:
        raise ValueError(f"clip ratios must be >= 0 (low {low}, high {high})")
    if clip_ratio_c <= 1.0:
        raise ValueError(f"clip_ratio_c must be > 1.0 for dual-clip PPO, got {clip_ratio_c}")
    ratio = torch.exp(torch.clamp(logprobs - old_logprobs, min=-20.0, max=20.0))
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - low, 1.0 + high)
    per_token = torch.maximum(unclipped, clipped)
    dual = torch.minimum(-advantages * clip_ratio_c, per_token)
    per_token = torch.where(advantages < 0, dual, per_token)
    denom = mask.sum().clamp(min=1.0)
    return (per_token * mask).sum() / denom
