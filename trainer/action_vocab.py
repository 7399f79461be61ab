"""A restricted output vocabulary for the tiny policy: the tokens it may emit, a head over only them.

The tiny Qwen3 reads any of Qwen's 151,669 tokens, but on a fixed task set it only ever needs to
*write* the few thousand that occur in the conversations it is trained on (tool-call syntax, tool
and argument names, values seen in prompts and tool results). Sampling and log-probs over that set
are constrained decoding: the policy's distribution is softmax over the allowed rows of the (tied)
output embedding, used identically when sampling and when scoring, so the PPO ratio stays exact.
It makes every head computation ~50x cheaper on a CPU and leaves the model far fewer ways to be
wrong, which is what lets a few minutes of SFT + GRPO show a learning signal. A target outside
the vocabulary cannot be scored: ``index`` raises, naming how many tokens were unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

__all__ = ["ActionVocab"]


@dataclass(frozen=True)
class ActionVocab:
    """Allowed output token ids (sorted, unique) and their positions in the restricted head."""

    ids: torch.Tensor

    @classmethod
    def from_sequences(cls, sequences: Iterable[Sequence[int]], extra: Iterable[int] = ()) -> ActionVocab:
        """Every token of ``sequences`` plus ``extra`` (stop tokens, say)."""
        seen: set[int] = set(int(t) for t in extra)
        for seq in sequences:
            seen.update(int(t) for t in seq)
        if not seen:
            raise ValueError("an action vocabulary needs at least one token")
        return cls(ids=torch.tensor(sorted(seen), dtype=torch.long))

    def __len__(self) -> int:
        return int(self.ids.numel())

    def to(self, device: torch.device | str) -> ActionVocab:
        return ActionVocab(ids=self.ids.to(device))

    def logits(self, model: object, hidden: torch.Tensor) -> torch.Tensor:
        """Logits over the allowed tokens only: ``hidden @ W[ids].T`` with the model's output head."""
        head = model.lm_head  # type: ignore[attr-defined]
        weight = head.weight.index_select(0, self.ids.to(head.weight.device))
        bias = getattr(head, "bias", None)
        out = hidden @ weight.T
        return out + bias.index_select(0, self.ids.to(out.device)) if bias is not None else out

    def token(self, index: torch.Tensor) -> torch.Tensor:
        """Token ids of head positions."""
        return self.ids.to(index.device)[index]

    def index(self, token_ids: torch.Tensor) -> torch.Tensor:
        """Head positions of token ids; every id must be allowed (ValueError otherwise)."""
        ids = self.ids.to(token_ids.device)
        pos = torch.searchsorted(ids, token_ids).clamp(max=ids.numel() - 1)
        missing = ids[pos] != token_ids
        if bool(missing.any()):
            raise ValueError(
                f"{int(missing.sum())} target tokens are outside the action vocabulary "
                f"({len(self)} tokens); build it from the data the policy is trained on"
            )
        return pos
