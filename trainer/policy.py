"""The policy of the torch recipe: a tiny Qwen3, batched sampling with a KV cache, token log-probs.

Plain torch + transformers, so it runs on a CPU and on a single GPU without vLLM or Ray. The
vocabulary is Qwen's (151,669 tokens): the language-model head dominates every cost, so log-probs
are computed only at the positions that are trained (the policy's own tokens), in chunks that bound
memory, and sampling draws from the CDF instead of ``torch.multinomial`` (much faster over a large
vocabulary on a CPU, same distribution).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trainer.action_vocab import ActionVocab

__all__ = [
    "MAX_POSITIONS",
    "ModelShape",
    "TokenStats",
    "build_tiny_model",
    "generate_batch",
    "token_stats",
]

MAX_POSITIONS = 8192  # the tiny model's context: prompt + every turn's tokens must fit


@dataclass(frozen=True)
class ModelShape:
    """Size of the randomly initialised Qwen3 (head_dim 64: vLLM's attention backends accept it)."""

    hidden: int = 128
    layers: int = 2
    heads: int = 2
    kv_heads: int = 1
    intermediate: int = 256


def build_tiny_model(
    vocab_size: int,
    seed: int,
    device: str,
    shape: ModelShape | None = None,
    save_dir: Path | None = None,
) -> Any:
    """A randomly initialised Qwen3 causal LM (seeded), optionally saved for verl's ``model.path``."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    shape = shape or ModelShape()
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        head_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
    )
    model = AutoModelForCausalLM.from_config(config).to(device)
    if save_dir is not None:
        model.save_pretrained(str(save_dir))
    return model


def _sample(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row from softmax(logits / T) (argmax when T == 0), by inverting the CDF."""
    if temperature <= 0:
        return logits.argmax(dim=-1)
    cdf = torch.softmax(logits.float() / temperature, dim=-1).cumsum(dim=-1)
    u = torch.rand((cdf.shape[0], 1), generator=generator, device=cdf.device) * cdf[:, -1:]
    return torch.searchsorted(cdf, u).squeeze(-1).clamp(max=cdf.shape[-1] - 1)


@torch.no_grad()
def generate_batch(
    model: Any,
    contexts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    stop_ids: Sequence[int],
    pad_id: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    vocab: ActionVocab | None = None,
) -> list[list[int]]:
    """Sample a continuation of every context at once (left-padded, one KV cache).

    A row stops after a stop token (kept) or ``max_new_tokens``; finished rows leave the batch, so a
    short answer does not pay for a long sibling. With ``vocab`` only its tokens can be drawn.
    """
    if not contexts:
        return []
    device = model.device
    width = max(len(c) for c in contexts)
    ids = torch.full((len(contexts), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros_like(ids)
    for i, ctx in enumerate(contexts):
        ids[i, width - len(ctx) :] = torch.tensor(list(ctx), dtype=torch.long, device=device)
        mask[i, width - len(ctx) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    from transformers import DynamicCache

    def forward(**kw: Any) -> tuple[Any, torch.Tensor]:
        """(KV cache, next-token logits at the last position): the full head, or the vocab's."""
        if vocab is None:
            out = model(**kw, use_cache=True, logits_to_keep=1)
            return out.past_key_values, out.logits[:, -1]
        out = model.model(**kw, use_cache=True)
        return out.past_key_values, vocab.logits(model, out.last_hidden_state[:, -1])

    cache, logits = forward(
        input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=DynamicCache()
    )
    stops = set(int(s) for s in stop_ids)
    results: list[list[int]] = [[] for _ in contexts]
    rows = list(range(len(contexts)))  # batch row -> context index
    last = positions[:, -1].clone()
    for step in range(max_new_tokens):
        nxt = _sample(logits, temperature, generator)
        if vocab is not None:
            nxt = vocab.token(nxt)
        keep: list[int] = []
        for b, token in enumerate(nxt.tolist()):
            results[rows[b]].append(token)
            if token not in stops:
                keep.append(b)
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(rows):
            index = torch.tensor(keep, device=device)
            cache.batch_select_indices(index)
            nxt, mask, last = nxt[index], mask[index], last[index]
            rows = [rows[b] for b in keep]
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        last = last + 1
        cache, logits = forward(
            input_ids=nxt[:, None], attention_mask=mask, position_ids=last[:, None], past_key_values=cache
        )
    return results


@dataclass
class TokenStats:
    """Per trained token: log-prob under the model, and the entropy of its distribution."""

    logprobs: torch.Tensor
    entropy: torch.Tensor


def token_stats(
    model: Any,
    sequences: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    *,
    with_grad: bool,
    vocab: ActionVocab | None = None,
    temperature: float = 1.0,
) -> list[TokenStats]:
    """Log-prob and entropy of the tokens at ``targets[i]`` (indices into ``sequences[i]``).

    One body forward over the right-padded batch, then the vocabulary head only at the hidden
    states that predict a target (position t - 1 for token t): the head is the costly part. With
    ``vocab`` and ``temperature`` the distribution is the one ``generate_batch`` samples from with
    the same vocab and temperature (softmax of logits / T: the policy a PPO ratio must score).
    """
    if temperature <= 0:
        raise ValueError("log-probs need a temperature > 0 (T = 0 is greedy decoding, not a distribution)")
    device = model.device
    width = max(len(s) for s in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long, device=device)
    mask = torch.zeros_like(ids)
    for i, seq in enumerate(sequences):
        ids[i, : len(seq)] = torch.tensor(list(seq), dtype=torch.long, device=device)
        mask[i, : len(seq)] = 1
    with torch.set_grad_enabled(with_grad):
        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        rows = torch.cat([torch.full((len(t),), i, device=device) for i, t in enumerate(targets)])
        cols = torch.cat([torch.tensor(list(t), dtype=torch.long, device=device) for t in targets])
        states = hidden[rows, cols - 1]
        wanted = ids[rows, cols]
        if vocab is None:
            logits = model.lm_head(states).float()
        else:
            logits, wanted = vocab.logits(model, states).float(), vocab.index(wanted)
        logp_all = torch.log_softmax(logits / temperature, dim=-1)
        logp = logp_all.gather(-1, wanted[:, None])[:, 0]
    with torch.no_grad():
        detached = logp_all.detach()
        entropy = -(detached.exp() * detached).sum(-1)
    out: list[TokenStats] = []
    start = 0
    for t in targets:
        end = start + len(t)
        out.append(TokenStats(logprobs=logp[start:end], entropy=entropy[start:end]))
        start = end
    return out
