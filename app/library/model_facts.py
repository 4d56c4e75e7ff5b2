"""What the model list shows about a model, read from its files without loading it: parameters
and quantization from the safetensors headers and the config, and the size on disk."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

_PART_NAMES = {"embed_tokens": "embeddings", "lm_head": "output"}
# The entry's branchwise.json says whether the model has a chat template (recorded when it is
# added: reading a large tokenizer_config.json at every listing would slow the GUI thread).
CHAT_TEMPLATE_KEY = "chat_template"
_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


def safetensors_header(path: Path) -> dict[str, Any]:
    """The tensor table of a .safetensors file: an 8-byte length, then that much JSON."""
    with path.open("rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        if length > path.stat().st_size - 8:  # a damaged length would be allocated whole
            raise ValueError(f"{path.name} has a damaged header")
        header = json.loads(file.read(length))
    if not isinstance(header, dict):
        raise ValueError(f"{path.name} has a damaged header")
    header.pop("__metadata__", None)
    return header


def parameter_count(weights: list[Path], config: dict[str, Any]) -> int | None:
    """Parameters as the model was before quantization: a packed uint32 word holds 32 / bits
    weights; scales and biases are quantization bookkeeping, not parameters."""
    quant = _quantization(config)
    total = 0
    try:
        for file in weights:
            tensors = safetensors_header(file)
            for name, entry in tensors.items():
                module, _, leaf = name.rpartition(".")
                packed = f"{module}.scales" in tensors
                if packed and leaf in ("scales", "biases"):
                    continue
                count = math.prod(entry["shape"])
                if packed and leaf == "weight" and entry["dtype"] == "U32":
                    count = count * 32 // _module_bits(quant, module)
                total += count
    except (OSError, ValueError, KeyError, TypeError, struct.error):  # damaged headers
        return None
    return total


def quantization_label(weights: list[Path], config: dict[str, Any]) -> str:
    """e.g. "4-bit", "4-bit (embeddings 8-bit)", "mxfp4", or the float type: "bf16"."""
    quant = _quantization(config)
    if "bits" in quant:
        mode = quant.get("mode", "affine")
        label = f"{quant['bits']}-bit" if mode == "affine" else mode
        others = {
            f"{_PART_NAMES.get(module.rpartition('.')[2], 'some layers')} {own['bits']}-bit"
            for module, own in quant.items()
            if isinstance(own, dict) and own.get("bits", quant["bits"]) != quant["bits"]
        }
        return f"{label} ({', '.join(sorted(others))})" if others else label
    sizes: dict[str, int] = {}
    try:
        for file in weights:
            for entry in safetensors_header(file).values():
                start, end = entry["data_offsets"]
                sizes[entry["dtype"]] = sizes.get(entry["dtype"], 0) + end - start
    except (OSError, ValueError, KeyError, TypeError, struct.error):  # damaged headers
        return "unknown"
    return max(sizes, key=sizes.__getitem__).lower() if sizes else "unknown"


def size_on_disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _quantization(config: dict[str, Any]) -> dict[str, Any]:
    return config.get("quantization") or config.get("quantization_config") or {}


def _module_bits(quant: dict[str, Any], module: str) -> int:
    own = quant.get(module)
    return own["bits"] if isinstance(own, dict) and "bits" in own else quant.get("bits", 4)


def has_chat_template(folder: Path) -> bool:
    """Whether the model folder has a chat template (its own file, or in tokenizer_config.json);
    a base model has none and serves plain completions only."""
    if any((folder / name).is_file() for name in _TEMPLATE_FILES):
        return True
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(config, dict) and bool(config.get("chat_template"))
