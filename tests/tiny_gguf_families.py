"""Tiny GGUF files of the families added in issue 45 (Gemma 3, Phi-3, Mistral with a
SentencePiece vocabulary), written as llama.cpp's converter writes them, for the import tests.

The files in tests/data/gguf/ were written once by `write_all` and are committed with the
greedy token ids llama.cpp produced from them (tests/data/gguf/llama_cpp_reference.json, by
`tools/llama_cpp_reference.py`): llama.cpp must have read the very bytes the test imports.
Each model is a random-weight model built with mlx-lm's own class for the family, its weights
drawn with numpy from a fixed seed, its output scaled up so greedy choices are not near-ties,
stored in float32 (what llama.cpp computes with exactly) except where a test names a type.

The vocabulary is a small SentencePiece one in llama.cpp's layout: control tokens, the 256 byte
tokens `<0x00>`..`<0xFF>` for characters it lacks, single characters, and pieces learnt by
merging the most frequent pairs of a short text, each scored below the one before it (the order
both llama.cpp's merges and transformers' rebuilt ones follow).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import gguf
import mlx.core as mx
import numpy as np
from mlx.utils import tree_flatten, tree_unflatten

from inference.models.registry import get_model_classes
from tests.tiny_gguf import add_hyperparameters, add_weight, finish, permute

DATA = Path(__file__).parent / "data" / "gguf"
REFERENCE = DATA / "llama_cpp_reference.json"
# The prompts each file is checked on (plain completions, as llama.cpp's BOS rules give them).
PROMPTS = (
    "The capital of France is",
    "Once upon a time there was a small town",
    "def main(): return 42",
)
_CORPUS = (
    "the capital of france is paris. once upon a time there was a small town by the river. "
    "def main(): return 42. the cat sat on the mat and the dog ran to the town. "
    "there is a time for all things, and a place for the river to run."
)
_MERGES = 160
_OUTPUT_SCALE = 8.0
_GEMMA_CONTROL = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
_LLAMA_CONTROL = ["<unk>", "<s>", "</s>"]
# Phi-3's own tokens, after the SentencePiece vocabulary as in the real file (llama.cpp looks
# for `<|endoftext|>` in a file named Phi-3).
_PHI3_ADDED = ["<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>", "<|system|>"]
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{{ message['content'] }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

PHI3_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] "
    "+ '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}"
    "{% endif %}"
)

# family -> (GGUF architecture, mlx-lm config)
_SMALL = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 32,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 512,
}
CONFIGS: dict[str, dict[str, Any]] = {
    "gemma3": {
        **_SMALL,
        "model_type": "gemma3_text",
        "rope_theta": 1_000_000.0,
        "rope_local_base_freq": 10_000.0,
        "query_pre_attn_scalar": 32,
        "sliding_window": 8,
        "sliding_window_pattern": 2,
    },
    "phi3": {**_SMALL, "model_type": "phi3", "rope_theta": 10_000.0, "num_key_value_heads": 2},
    "mistral": {**_SMALL, "model_type": "llama", "rope_theta": 1_000_000.0},
}
ARCHITECTURES = {"gemma3": "gemma3", "phi3": "phi3", "mistral": "llama"}
# Seeds whose models have no near-tie in the first 16 greedy tokens of PROMPTS (the top two
# logits at least 0.1 apart, where float32 rounding moves them by about 1e-4): otherwise
# llama.cpp and MLX, both exact, may part at a tie.
SEEDS = {"gemma3": 7, "phi3": 10, "mistral": 11}


def sentencepiece_vocab(family: str) -> tuple[list[str], list[float], list[int]]:
    """(tokens, scores, token types) of the family's tiny SentencePiece vocabulary."""
    gemma = family == "gemma3"
    control = _GEMMA_CONTROL if gemma else _LLAMA_CONTROL
    text = _CORPUS.replace(" ", "▁")
    text = text if gemma else "▁" + text
    words = [list(word) for word in text.replace("▁", " ▁").split(" ") if word]
    chars = sorted({c for word in words for c in word} | set("ABCDEFTPO\n"))
    pieces: list[str] = []
    for _ in range(_MERGES):
        pairs = Counter(
            (word[i], word[i + 1]) for word in words for i in range(len(word) - 1)
        ).most_common(1)
        if not pairs:
            break
        (left, right), _ = pairs[0]
        pieces.append(left + right)
        words = [_merge(word, left, right) for word in words]
    learnt = pieces + [c for c in chars if c not in pieces]
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    added = _PHI3_ADDED if family == "phi3" else []
    tokens = control + bytes_ + learnt + added
    scores = [0.0] * (len(control) + 256) + [-float(i) for i in range(len(learnt))]
    scores += [0.0] * len(added)
    types = [2 if t == "<unk>" else 3 for t in control] + [6] * 256 + [1] * len(learnt)
    return tokens, scores, types + [3] * len(added)


def _merge(word: list[str], left: str, right: str) -> list[str]:
    merged: list[str] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
            merged.append(left + right)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return merged


def tiny_family_model(family: str, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
    """The family's random-weight mlx-lm model, its weights drawn by numpy from `seed` (by
    default the family's seed in SEEDS)."""
    seed = SEEDS[family] if seed is None else seed
    tokens, _, _ = sentencepiece_vocab(family)
    config = {**CONFIGS[family], "vocab_size": len(tokens), "tie_word_embeddings": False}
    model_class, args_class = get_model_classes(config)
    model = model_class(args_class.from_dict(config))
    rng = np.random.default_rng(seed)
    weights = []
    for name, value in tree_flatten(model.parameters()):
        if name.endswith("norm.weight"):  # near Gemma's 0 (it adds one), near 1 elsewhere
            drawn = rng.uniform(-0.2, 0.2, value.shape) + (0.0 if family == "gemma3" else 1.0)
        else:
            drawn = rng.normal(0.0, 0.15, value.shape)
        if name == "lm_head.weight":
            drawn = drawn * _OUTPUT_SCALE
        weights.append((name, mx.array(np.asarray(drawn, np.float32))))
    model.update(tree_unflatten(weights))
    return model, config


def write_family_gguf(
    family: str,
    path: Path,
    qtype: gguf.GGMLQuantizationType = gguf.GGMLQuantizationType.F32,
    rope_factors: bool = False,
) -> Path:
    """Write the family's tiny model as llama.cpp's converter would: matrices in `qtype`
    (float32 by default), everything else float32; with `rope_factors`, the LongRoPE factor
    tensors of a 128k-context Phi-3."""
    model, config = tiny_family_model(family)
    architecture = ARCHITECTURES[family]
    writer = gguf.GGUFWriter(path, architecture)
    writer.add_name(f"tiny {family}")
    add_hyperparameters(writer, config)
    if family == "gemma3":
        writer.add_sliding_window(config["sliding_window"])
        writer.add_uint32(f"{architecture}.attention.sliding_window_pattern", 2)
    _vocabulary(writer, family)
    if rope_factors:
        half = config["head_dim"] // 2
        writer.add_tensor("rope_factors_long.weight", np.full(half, 2.0, np.float32))
        writer.add_tensor("rope_factors_short.weight", np.ones(half, np.float32))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[architecture.upper()], 99)
    for name, value in tree_flatten(model.parameters()):
        data = np.array(value.astype(mx.float32))
        if family == "gemma3" and name.endswith("norm.weight"):
            data = data + 1.0  # llama.cpp's norms multiply by the weight, Gemma's by 1 + weight
        if family == "mistral" and name.endswith(("q_proj.weight", "k_proj.weight")):
            heads = config["num_attention_heads" if "q_proj" in name else "num_key_value_heads"]
            data = permute(data, heads)
        add_weight(writer, names.get_name(name, try_suffixes=(".weight", ".bias")), data, qtype)
    return finish(writer, path)


def _vocabulary(writer: gguf.GGUFWriter, family: str) -> None:
    gemma = family == "gemma3"
    tokens, scores, types = sentencepiece_vocab(family)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    control = _GEMMA_CONTROL if gemma else _LLAMA_CONTROL
    writer.add_bos_token_id(control.index("<bos>" if gemma else "<s>"))
    writer.add_eos_token_id(control.index("<eos>" if gemma else "</s>"))
    writer.add_unk_token_id(control.index("<unk>"))
    if gemma:
        writer.add_pad_token_id(0)
        writer.add_add_space_prefix(False)
        writer.add_chat_template(GEMMA_TEMPLATE)
    if family == "phi3":
        writer.add_eot_token_id(tokens.index("<|end|>"))
        writer.add_chat_template(PHI3_TEMPLATE)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)


def write_all(folder: Path = DATA) -> list[Path]:
    """Every committed tiny GGUF (run by tools/llama_cpp_reference.py --write)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_family_gguf("gemma3", folder / "tiny-gemma3.gguf"),
        write_family_gguf("phi3", folder / "tiny-phi3.gguf"),
        write_family_gguf("mistral", folder / "tiny-mistral.gguf"),
        write_family_gguf(
            "gemma3", folder / "tiny-gemma3.Q5_0.gguf", gguf.GGMLQuantizationType.Q5_0
        ),
    ]
