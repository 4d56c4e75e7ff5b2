"""Which GGUF files Branchwise imports, read from the checked header alone: the families, the
tokenizers, the tensor types, and what the imported folder will take on the disk.

No MLX: the library's scan of a models folder asks the same questions of every GGUF it finds,
and the importer asks them first, so a file the scan lists as runnable is the file the import
accepts, and one it refuses is refused in the same words.

How each tensor type arrives in MLX (`inference.importing.gguf_tensors` does it):

* exactly, in MLX's affine layout with groups of 32: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (one scale,
  and a bias or a fixed offset, per 32 values), Q4_K and Q5_K (a scale and a minimum per 32
  values, kept in float32 since a product of the block's float16 scale and a 6-bit factor does
  not fit float16);
* dequantized to float16: every other type (Q2_K, Q3_K and Q6_K scale groups of 16 values,
  which MLX's groups of 32 cannot hold exactly; the IQ and ternary types have no affine form).
  float16 keeps 11 significant bits, far finer than any of these types' own steps, but the
  folder grows: 2 bytes a weight instead of 0.4 to 0.8. `imported_bytes` says by how much
  before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf import GGMLQuantizationType as Type
from gguf.quants import (
    _type_traits as _DEQUANTIZABLE,  # pyright: ignore[reportPrivateUsage]  # the one list of them
)

from inference.importing.gguf_check import GGUFHeader, TensorEntry

# Bits of the MLX layout each exactly converted type arrives in, and whether its scales stay
# float32 (K-quants) rather than float16.
EXACT_TYPES: dict[Type, tuple[int, bool]] = {
    Type.Q4_0: (4, False),
    Type.Q4_1: (4, False),
    Type.Q5_0: (5, False),
    Type.Q5_1: (5, False),
    Type.Q8_0: (8, False),
    Type.Q4_K: (4, True),
    Type.Q5_K: (5, True),
}
FLOAT_TYPES = (Type.F32, Type.F16, Type.BF16)
READABLE_TYPES = frozenset(FLOAT_TYPES) | frozenset(_DEQUANTIZABLE)
GROUP_SIZE = 32

# GGUF architecture -> the families it holds, as the library names them.
FAMILIES: dict[str, str] = {
    "llama": "Llama, Mistral, Ministral, SmolLM",
    "qwen2": "Qwen 2",
    "qwen3": "Qwen 3",
    "gemma3": "Gemma 3 (text)",
    "phi3": "Phi-3, Phi-4",
}
# Architectures people meet in Ollama's and LM Studio's catalogues that are refused, and why.
_REFUSED: dict[str, str] = {
    "clip": "a vision projector (mmproj), not a model by itself",
    "mistral3": "a Mistral 3 model (Ministral 3, Mistral Small 3.1 and later): their YaRN "
    "RoPE with attention temperature is not imported yet",
    "gemma": "a Gemma 1 model: only Gemma 3 GGUF files are imported",
    "gemma2": "a Gemma 2 model: only Gemma 3 GGUF files are imported",
    "gemma3n": "a Gemma 3n model: only Gemma 3 GGUF files are imported",
    "phi2": "a Phi-2 model: only Phi-3 and Phi-4 GGUF files are imported",
}
# Tokenizers rebuilt from GGUF metadata: byte-level BPE and SentencePiece (llama.cpp's names).
TOKENIZERS = ("gpt2", "llama")


@dataclass(frozen=True)
class GGUFFacts:
    """What the library shows of a GGUF before importing it."""

    architecture: str
    name: str
    runnable: bool
    reason: str | None  # why not, in one line; None when runnable
    chat_template: bool  # False: a base model, for plain completions
    imported_bytes: int  # what the MLX folder will take


def facts(header: GGUFHeader, fallback_name: str) -> GGUFFacts:
    """The facts of a checked header; `fallback_name` names a file whose metadata names none."""
    metadata = header.metadata
    architecture = str(metadata.get("general.architecture", "unknown"))
    return GGUFFacts(
        architecture=architecture,
        name=str(metadata.get("general.name") or fallback_name),
        runnable=(reason := refusal(header)) is None,
        reason=reason,
        chat_template=bool(metadata.get("tokenizer.chat_template")),
        imported_bytes=imported_bytes(header),
    )


def refusal(header: GGUFHeader) -> str | None:
    """Why Branchwise cannot import this GGUF, in one line; None when it can."""
    metadata = header.metadata
    architecture = metadata.get("general.architecture")
    if not isinstance(architecture, str):
        return "the file names no architecture"
    if architecture in _REFUSED:
        return f"it is {_REFUSED[architecture]}"
    if architecture not in FAMILIES:
        return (
            f"its architecture '{architecture}' is not one Branchwise imports "
            f"({', '.join(sorted(FAMILIES))})"
        )
    split = metadata.get("split.count")
    if isinstance(split, int) and split > 1:
        return f"it is one part of a model split into {split} files; Branchwise imports whole files"
    tokenizer = metadata.get("tokenizer.ggml.model")
    if tokenizer not in TOKENIZERS:
        return f"its '{tokenizer}' tokenizer cannot be rebuilt (only BPE and SentencePiece)"
    pre = metadata.get("tokenizer.ggml.pre") or "default"
    if tokenizer == "gpt2" and not _known_split(str(pre)):
        return f"its pre-tokenizer '{pre}' is not one Branchwise knows"
    unreadable = sorted({t.kind.name for t in header.tensors if t.kind not in READABLE_TYPES})
    if unreadable:
        kinds = ", ".join(unreadable)
        return f"it holds tensors of the GGUF type {kinds}, which Branchwise cannot read"
    if any(t.name.startswith("rope_factors_") for t in header.tensors):
        return (
            "it is a 128k-context (LongRoPE) variant, which llama.cpp and mlx-lm scale "
            "differently; its 4k-context sibling imports"
        )
    return None


def _known_split(pre: str) -> bool:
    from inference.importing.gguf_tokenizer import splits_known

    return splits_known(pre)


# tokenizer.json's size per vocabulary entry, about (the token, its merges or score, its id):
# 45 bytes for SmolLM2's 49,152 tokens, 128 for Gemma 3's 262,144 (merges rebuilt from them).
_TOKENIZER_BYTES_PER_TOKEN = 128


def imported_bytes(header: GGUFHeader) -> int:
    """About what the MLX folder of this GGUF takes on the disk: its weights and tokenizer."""
    tokens = header.list_lengths.get("tokenizer.ggml.tokens")
    if tokens is None:
        tokens = len(header.metadata.get("tokenizer.ggml.tokens") or ())
    weights = sum(_tensor_bytes(tensor) for tensor in header.tensors)
    return weights + tokens * _TOKENIZER_BYTES_PER_TOKEN


def dequantized(header: GGUFHeader) -> list[str]:
    """The names of the GGUF types in this file that arrive dequantized to float16."""
    kinds = {t.kind for t in header.tensors}
    return sorted(k.name for k in kinds if k not in EXACT_TYPES and k not in FLOAT_TYPES)


def _tensor_bytes(tensor: TensorEntry) -> int:
    if tensor.kind in EXACT_TYPES and len(tensor.shape) == 2:
        bits, wide = EXACT_TYPES[tensor.kind]
        wide = wide or tensor.name == "token_embd.weight"  # see gguf_tensors._affine
        groups = tensor.elements // GROUP_SIZE
        return tensor.elements * bits // 8 + groups * 2 * (4 if wide else 2)
    if tensor.kind in (Type.F32, Type.F16, Type.BF16):
        return tensor.nbytes
    return tensor.elements * 2  # dequantized to float16
