"""Turn a GGUF file into an MLX model folder that `load_model` reads.

The folder gets config.json (from the GGUF metadata, per family: `gguf_families`),
model.safetensors (tensors renamed to mlx-lm's names; quantized tensors kept in their own
grid where MLX can hold it exactly, else dequantized: `gguf_tensors`) and a tokenizer rebuilt
from the vocabulary (`gguf_tokenizer`). Bits can differ per tensor (SmolLM2 stores its embedding
in 8 bits and the rest in 4), so `quantization` in config.json names every module whose bits
differ from the most common ones.

Whether a file can be imported at all is `gguf_support.refusal`'s answer, the one the library's
scan gives too. The import is atomic: everything is written into a hidden temporary folder
inside the models folder, checked by building the model from it with mlx-lm, and only then
renamed into place. Any failure, including a full disk or a cancel, removes the temporary folder
and raises ModelLoadError.
"""

from __future__ import annotations

import errno
import json
import re
import shutil
import threading
from pathlib import Path

import mlx.core as mx

from inference.errors import ModelLoadError
from inference.importing.gguf_families import FAMILIES, REQUIRED, model_config, rename_tensors
from inference.importing.gguf_reader import open_gguf
from inference.importing.gguf_support import imported_bytes, refusal
from inference.importing.gguf_tokenizer import end_of_turn_ids, write_tokenizer
from inference.importing.model_folder import (
    Progress,
    reporter,
    write_model_folder,
)
from inference.loading.file_limits import check_config_values
from inference.loading.folder_check import check_builds
from inference.prompt.template_check import check_folder_template

# Steps besides reading the tensors: tokenizer, weights file, load check.
_OTHER_STEPS = 3


def import_gguf(
    gguf_path: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Import the GGUF file into a new folder inside `models_dir` and return that folder.

    `progress(done, total)` is called as the import advances (in steps); setting `cancel` stops
    it at the next step with ImportCancelled. Raises ModelLoadError, leaving nothing behind, when
    the file is not GGUF, damaged, of an architecture or type Branchwise cannot import, or when
    the disk is full.
    """
    source = Path(gguf_path).expanduser()
    report = reporter(progress, cancel)
    return write_model_folder(
        models_dir,
        _folder_name(source),
        source.name,
        lambda folder: _write_folder(source, folder, report),
        _space_needed(source),
    )


def _space_needed(source: Path) -> int:
    """What the MLX folder will take (dequantized types grow it), read from the checked header;
    the file's own size for a file whose header is damaged (the import then refuses it)."""
    from inference.importing.gguf_check import check_gguf

    try:
        return int(imported_bytes(check_gguf(source, keep_lists=())) * 1.02) + 16 * 1024 * 1024
    except ModelLoadError:
        return source.stat().st_size if source.is_file() else 0


def _write_folder(source: Path, folder: Path, report: Progress) -> None:
    gguf = open_gguf(source)
    metadata = gguf.metadata
    architecture = str(metadata.get("general.architecture"))
    missing = [key for key in REQUIRED if f"{architecture}.{key}" not in metadata]
    if missing and architecture in FAMILIES:
        raise ModelLoadError(f"{source.name} lacks the metadata {', '.join(missing)}.")
    reason = refusal(gguf.header)
    if reason is not None:
        raise ModelLoadError(f"{source.name} cannot be imported: {reason}.")
    total = gguf.tensor_count + _OTHER_STEPS
    report(0, total)
    # The tokenizer first: it is quick, and refuses a vocabulary it cannot rebuild or a chat
    # template that loops before the tensors are read (slow for types that need re-quantizing).
    write_tokenizer(metadata, folder, metadata.get(f"{architecture}.context_length"))
    check_folder_template(folder, source.name, "the metadata key tokenizer.chat_template")
    report(1, total)
    tensors = gguf.read_tensors(lambda done, _: report(1 + done, total))
    rope_factors = tensors.pop("rope_freqs.weight", None)
    weights = rename_tensors(tensors, FAMILIES[architecture])
    if "model.embed_tokens.weight" not in weights:
        raise ModelLoadError(f"{source.name} has no token embedding (token_embd).")
    config = model_config(metadata, architecture, weights, rope_factors)
    ends = end_of_turn_ids(metadata)
    if len(ends) > 1:  # the template's own turn end besides EOS: a reply ends at either
        config["eos_token_id"] = ends
    # Before mlx-lm builds it: a layer count of 10**9 would take forever to build.
    check_config_values(config, f"The metadata of {source.name}")
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    try:
        mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})  # pyright: ignore[reportUnknownMemberType]  # mlx stub: no return type
    except RuntimeError as error:
        # MLX reports a failed write without an errno; a full disk is by far the usual cause.
        full = shutil.disk_usage(folder).free < _space_needed(source)
        raise OSError(errno.ENOSPC if full else errno.EIO, str(error)) from error
    report(total - 1, total)
    check_builds(folder, source.name)
    report(total, total)


def _folder_name(source: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", source.stem).strip(".-") or "imported-model"
