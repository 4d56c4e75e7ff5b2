"""Rebuild a Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) from GGUF metadata.

A GGUF carries no tokenizer.json: llama.cpp stores the vocabulary, merges or scores, token types
and the name of its pre-tokenizer (`tokenizer.ggml.pre`) as metadata. This module turns them
back into a `tokenizers.Tokenizer` that splits text exactly as the original model did:

* byte-level BPE (`tokenizer.ggml.model == "gpt2"`: Llama 3, Qwen, SmolLM, Phi-4) with the
  pre-tokenizers written here, which the SmolLM2 checks pin down;
* SentencePiece (`"llama"`: Llama 2, Mistral up to v0.3, Gemma 3, Phi-3), and byte-level BPE
  with a pre-tokenizer only transformers knows (Mistral's Tekken, GPT-4o's), rebuilt by
  transformers' own GGUF tokenizer conversion (`convert_gguf_tokenizer`, which needs neither
  torch nor the `gguf` package): it holds each family's quirks (Gemma's merges follow the
  vocabulary's order, Phi-3 adds its prefix space with a normalizer).

Anything else is refused with a message naming it, because a tokenizer that is merely close
gives silently wrong token ids. Whether the model adds a BOS token to plain text is the file's
`add_bos_token` (llama.cpp's default for SentencePiece: yes), written into tokenizer.json's
post-processor, so a plain completion starts as llama.cpp starts it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
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


_KNOWN_SPLITS = _GPT2_NAMES | _DIGIT_NAMES | _LLAMA3_NAMES | _QWEN2_NAMES
# Tokens a chat template writes to end a turn (llama.cpp's list of end-of-generation tokens):
# where the template writes one, the model ends its reply with it.
_TURN_ENDS = (
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|eom_id|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
)


def build_tokenizer(metadata: dict[str, Any]) -> Tokenizer:
    """The tokenizer the GGUF metadata describes, its BOS/EOS behaviour in its post-processor;
    ModelLoadError if it is not one we rebuild."""
    tokenizer = _vocabulary(metadata)
    tokenizer.post_processor = _post_processor(metadata)
    return tokenizer


def _vocabulary(metadata: dict[str, Any]) -> Tokenizer:
    kind = metadata.get("tokenizer.ggml.model")
    pre_name = metadata.get("tokenizer.ggml.pre") or "default"
    if kind == "gpt2" and pre_name in _KNOWN_SPLITS:
        return _byte_level_bpe(metadata, pre_name)
    if kind == "llama" or (kind == "gpt2" and _transformers_splits(pre_name)):
        return _from_transformers(metadata)
    if kind == "gpt2":
        raise ModelLoadError(
            f"This GGUF's pre-tokenizer '{pre_name}' is not one Branchwise knows, so its text "
            "would be split into the wrong tokens."
        )
    raise ModelLoadError(
        f"This GGUF uses a '{kind}' tokenizer; Branchwise rebuilds byte-level BPE ('gpt2') and "
        "SentencePiece ('llama') tokenizers from GGUF files. Look for an MLX version of the "
        "model instead."
    )


def splits_known(pre_name: str) -> bool:
    """Whether a byte-level BPE file's pre-tokenizer is one Branchwise can rebuild."""
    return pre_name in _KNOWN_SPLITS or _transformers_splits(pre_name)


def _transformers_splits(pre_name: str) -> bool:
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS

    return pre_name in GGUF_PRE_TOKENIZER_SPLITS


def _from_transformers(metadata: dict[str, Any]) -> Tokenizer:
    """transformers' rebuild of the tokenizer, from the metadata under its own names."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        GGUF_TOKENIZER_MAPPING,
        convert_gguf_tokenizer,  # pyright: ignore[reportUnknownVariableType]  # a loose dict
    )

    names = GGUF_TOKENIZER_MAPPING["tokenizer"]
    described = {
        name: metadata[f"tokenizer.{key}"]
        for key, name in names.items()
        if f"tokenizer.{key}" in metadata
    }
    architecture = str(metadata.get("general.architecture"))
    try:
        # transformers' stub leaves the second item (unused) untyped.
        converted = cast(
            "tuple[Tokenizer, object]", convert_gguf_tokenizer(architecture, described)
        )  # pyright: ignore[reportUnknownVariableType]
    except (KeyError, ValueError, TypeError) as error:
        raise ModelLoadError(f"This GGUF's tokenizer cannot be rebuilt: {error}") from error
    return converted[0]


def _post_processor(metadata: dict[str, Any]) -> processors.TemplateProcessing:
    """BOS before plain text where the file says so (SentencePiece files that say nothing get
    one, as llama.cpp gives them), EOS after it where it says so."""
    default_bos = metadata.get("tokenizer.ggml.model") == "llama"
    bos = _token(metadata, "bos") if _adds(metadata, "bos", default_bos) else None
    eos = _token(metadata, "eos") if _adds(metadata, "eos", False) else None
    tokens: list[str] = metadata["tokenizer.ggml.tokens"]
    ids = {token: tokens.index(token) for token in (bos, eos) if token is not None}
    single = " ".join([*([f"{bos}:0"] if bos else []), "$A:0", *([f"{eos}:0"] if eos else [])])
    pair = " ".join(
        [single, *([f"{bos}:1"] if bos else []), "$B:1", *([f"{eos}:1"] if eos else [])]
    )
    return processors.TemplateProcessing(single=single, pair=pair, special_tokens=list(ids.items()))


def _adds(metadata: dict[str, Any], which: str, default: bool) -> bool:
    return bool(metadata.get(f"tokenizer.ggml.add_{which}_token", default))


def end_of_turn_ids(metadata: dict[str, Any]) -> list[int]:
    """The ids that end a reply: the file's EOS, EOT and EOM tokens, and the turn-ending tokens
    its chat template writes."""
    tokens: list[str] = metadata["tokenizer.ggml.tokens"]
    template = str(metadata.get("tokenizer.chat_template") or "")
    ids = [metadata.get(f"tokenizer.ggml.{key}_token_id") for key in ("eos", "eot", "eom")]
    ids += [tokens.index(token) for token in _TURN_ENDS if token in template and token in tokens]
    return sorted({i for i in ids if isinstance(i, int) and 0 <= i < len(tokens)})


def _byte_level_bpe(metadata: dict[str, Any], pre_name: str) -> Tokenizer:
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
        "add_bos_token": _adds(metadata, "bos", metadata.get("tokenizer.ggml.model") == "llama"),
        "add_eos_token": _adds(metadata, "eos", False),
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
