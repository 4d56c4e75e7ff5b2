"""Rebuild a Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) from GGUF metadata.

A GGUF carries no tokenizer.json: llama.cpp stores the vocabulary, merges, token types and the
name of its pre-tokenizer (`tokenizer.ggml.pre`) as metadata. This module turns them back into a
`tokenizers.Tokenizer` that splits text exactly as the original model did. Only byte-level BPE
vocabularies (`tokenizer.ggml.model == "gpt2"`, which covers Llama 3, Qwen, SmolLM and most
recent models) are rebuilt; anything else is refused with a message naming it, because a
tokenizer that is merely close gives silently wrong token ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers as pre

from inference.errors import ModelLoadError

# llama.cpp's token types (llama_token_type): CONTROL tokens are special (never produced from
# plain text, skipped when decoding); USER_DEFINED tokens are matched whole but decoded as text.
_CONTROL = 3
_USER_DEFINED = 4

# The split patterns llama.cpp uses for each `tokenizer.ggml.pre` (llama-vocab.cpp), written the
# way the original tokenizer.json files spell them.
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_GPT2_NAMES = {"default", "gpt2", "gpt-2"}
# These split every digit on its own, then apply GPT-2's pattern.
_DIGIT_NAMES = {
    "smollm",
    "starcoder",
    "refact",
    "command-r",
    "codeshell",
    "exaone",
    "minerva-7b",
}
_LLAMA3_NAMES = {"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral", "smaug-bpe", "dbrx"}
_QWEN2_NAMES = {"qwen2", "deepseek-r1-qwen"}


def _byte_level_split(name: str) -> pre.PreTokenizer:
    if name in _GPT2_NAMES:
        return pre.ByteLevel(add_prefix_space=False, use_regex=True)
    if name in _DIGIT_NAMES:
        return pre.Sequence(
            [pre.Digits(individual_digits=True), pre.ByteLevel(add_prefix_space=False)]
        )
    pattern = _LLAMA3_SPLIT if name in _LLAMA3_NAMES else _QWEN2_SPLIT
    return pre.Sequence(
        [
            pre.Split(Regex(pattern), behavior="isolated"),
            pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def build_tokenizer(metadata: dict[str, Any]) -> Tokenizer:
    """The tokenizer the GGUF metadata describes; ModelLoadError if it is not one we rebuild."""
    kind = metadata.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise ModelLoadError(
            f"This GGUF uses a '{kind}' tokenizer; Branchwise can only rebuild byte-level BPE "
            "('gpt2') tokenizers from GGUF files. Look for an MLX version of the model instead."
        )
    pre_name = metadata.get("tokenizer.ggml.pre") or "default"
    known = _GPT2_NAMES | _DIGIT_NAMES | _LLAMA3_NAMES | _QWEN2_NAMES
    if pre_name not in known:
        raise ModelLoadError(
            f"This GGUF's pre-tokenizer '{pre_name}' is not one Branchwise knows, so its text "
            "would be split into the wrong tokens."
        )
    tokens: list[str] = metadata["tokenizer.ggml.tokens"]
    merges = [tuple(merge.split(" ", 1)) for merge in metadata.get("tokenizer.ggml.merges", [])]
    vocab = {token: index for index, token in enumerate(tokens)}
    tokenizer = Tokenizer(
        models.BPE(vocab=vocab, merges=merges, ignore_merges=pre_name in _LLAMA3_NAMES)
    )
    if pre_name in _QWEN2_NAMES:
        tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = _byte_level_split(pre_name)
    tokenizer.decoder = decoders.ByteLevel()
    types = metadata.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    tokenizer.add_special_tokens(  # pyright: ignore[reportUnknownMemberType]  # tokenizers stub: bare `list`
        [
            AddedToken(token, special=True, normalized=False)
            for token, kind in zip(tokens, types, strict=True)
            if kind == _CONTROL
        ]
    )
    tokenizer.add_tokens(  # pyright: ignore[reportUnknownMemberType]  # tokenizers stub: bare `list`
        [
            AddedToken(token, special=False, normalized=False)
            for token, kind in zip(tokens, types, strict=True)
            if kind == _USER_DEFINED
        ]
    )
    return tokenizer


def _token(metadata: dict[str, Any], key: str) -> str | None:
    index: int | None = metadata.get(f"tokenizer.ggml.{key}_token_id")
    tokens: list[str] = metadata["tokenizer.ggml.tokens"]
    return tokens[index] if index is not None and 0 <= index < len(tokens) else None


def tokenizer_config(metadata: dict[str, Any], context_length: int | None) -> dict[str, Any]:
    """tokenizer_config.json: special tokens, BOS/EOS behaviour and the chat template."""
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": _token(metadata, "bos"),
        "eos_token": _token(metadata, "eos"),
        "unk_token": _token(metadata, "unknown"),
        "pad_token": _token(metadata, "padding"),
        "add_bos_token": bool(metadata.get("tokenizer.ggml.add_bos_token", False)),
        "add_eos_token": bool(metadata.get("tokenizer.ggml.add_eos_token", False)),
        "clean_up_tokenization_spaces": False,
    }
    if context_length:
        config["model_max_length"] = context_length
    template = metadata.get("tokenizer.chat_template")
    if template:
        config["chat_template"] = template
    return config


def write_tokenizer(metadata: dict[str, Any], folder: Path, context_length: int | None) -> None:
    """Write tokenizer.json and tokenizer_config.json for the GGUF's vocabulary into `folder`."""
    build_tokenizer(metadata).save(str(folder / "tokenizer.json"))
    config = tokenizer_config(metadata, context_length)
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))
