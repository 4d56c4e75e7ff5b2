"""The model library: the model folders inside the models folder, described, renamed, deleted,
checked before they are added, and the built-in default imported on first start.

Everything here is plain file work (JSON, safetensors headers, copies) so the GUI can list
models without loading MLX. Each entry is one folder; a small `branchwise.json` in it keeps what
the model files do not say: the display name, where the model came from, and for a folder
linked in place, where its files are. New entries are assembled in a hidden folder inside the
models folder and renamed into place when complete, so the library never shows half a model.
Importing a GGUF runs MLX (in a child process, app/isolated.py) and raises inference's errors, so
`import_gguf_file` and `ensure_default_model` belong on the inference worker thread, and they
import `inference` only when called.
"""

from __future__ import annotations

import ast
import errno
import fnmatch
import functools
import importlib.util
import json
import math
import shutil
import struct
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from app.embedded_model import embedded_gguf_path
from app.isolated import run_isolated

METADATA_FILE = "branchwise.json"
DEFAULT_MODEL_NAME = "SmolLM2 135M Instruct"
# The files a model needs; everything else in a repository or folder is left behind.
MODEL_FILE_PATTERNS = (
    "config.json",
    "model*.safetensors",
    "model.safetensors.index.json",
    "tokenizer*.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "generation_config.json",
    "chat_template.*",
)
_PICKLE_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
_CONTEXT_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")
_COPY_CHUNK = 16 * 1024 * 1024

Progress = Callable[[int, int], None]


class LibraryError(Exception):
    """Something the library refuses; the message is written for the person using the app."""


class Cancelled(LibraryError):
    """The person cancelled; nothing was added to the library."""


@dataclass(frozen=True)
class ModelInfo:
    """One library entry, as the model list shows it."""

    id: str  # the entry's folder name, stable across renames
    folder: Path  # the entry's folder inside the models folder
    path: Path  # where the model files are: `folder`, or the original of a linked folder
    name: str
    architecture: str
    parameters: int | None
    quantization: str
    size_bytes: int
    weights_bytes: int
    context_length: int | None
    source: str
    builtin: bool = False
    linked: bool = False
    problem: str | None = None  # why the entry cannot be loaded; None when it can


# --- checking a folder --------------------------------------------------------------------------


def validate_folder(path: str | Path) -> dict[str, Any]:
    """Check that `path` is a model folder mlx-lm can load and return its config.

    Raises LibraryError naming the problem: not a folder, no or broken config.json, a model type
    mlx-lm does not support, code that would have to run from the folder, pickle-only or missing
    weights, a missing shard, no tokenizer.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise LibraryError(f"{folder} is not a folder.")
    config = check_config(folder)
    _check_weights(folder)
    if not any((folder / name).is_file() for name in _TOKENIZER_FILES):
        raise LibraryError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model).")
    return config


def check_config(folder: Path) -> dict[str, Any]:
    """The config part of `validate_folder`: it can be checked before the weights arrive."""
    config = _read_json(folder / "config.json", "config.json")
    if config is None:
        raise LibraryError(f"{folder} has no config.json, so it is not an MLX model folder.")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise LibraryError(f"config.json in {folder} does not name a model type.")
    tokenizer_config = _read_json(folder / "tokenizer_config.json", "tokenizer_config.json") or {}
    if "auto_map" in config or "model_file" in config or "auto_map" in tokenizer_config:
        raise LibraryError(
            "This model needs Python code shipped with it (trust_remote_code); "
            "Branchwise never runs such code."
        )
    if not mlx_lm_supports(model_type):
        raise LibraryError(
            f"The model type '{model_type}' is not supported by mlx-lm "
            f"{metadata.version('mlx-lm')}."
        )
    return config


def _read_json(path: Path, label: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise LibraryError(f"{label} in {path.parent} cannot be read: {error}") from error
    if not isinstance(value, dict):
        raise LibraryError(f"{label} in {path.parent} is not a JSON object.")
    return value


def _check_weights(folder: Path) -> None:
    if not list(folder.glob("model*.safetensors")):
        if any(next(folder.glob(pattern), None) for pattern in _PICKLE_WEIGHTS):
            raise LibraryError(
                f"{folder} has only PyTorch pickle weights (.bin/.pt). Branchwise loads only "
                "safetensors, because pickles can run code; use an MLX version of the model."
            )
        if any(folder.glob("*.gguf")):
            raise LibraryError(f"{folder} holds a GGUF file: import the .gguf file instead.")
        raise LibraryError(f"{folder} has no weights (model*.safetensors).")
    index = _read_json(folder / "model.safetensors.index.json", "model.safetensors.index.json")
    shards = sorted(set((index or {}).get("weight_map", {}).values()))
    missing = [shard for shard in shards if not (folder / shard).is_file()]
    if missing:
        raise LibraryError(f"{folder} is incomplete: {', '.join(missing)} is missing.")


def _mlx_lm_folder() -> Path:
    # find_spec locates the package without importing it: importing mlx_lm loads MLX.
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None or spec.origin is None:
        raise LibraryError("mlx-lm is not installed.")
    return Path(spec.origin).parent


@functools.cache
def _model_remapping() -> dict[str, str]:
    """mlx-lm's MODEL_REMAPPING (e.g. mistral -> llama), read from its source, not imported."""
    tree = ast.parse((_mlx_lm_folder() / "utils.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "MODEL_REMAPPING"
        ):
            return ast.literal_eval(node.value)
    return {}


def mlx_lm_supports(model_type: str) -> bool:
    """Whether mlx-lm has model code for `model_type` (after its own renames)."""
    module = _model_remapping().get(model_type, model_type)
    return (_mlx_lm_folder() / "models" / f"{module}.py").is_file()


# --- describing an entry ------------------------------------------------------------------------


def read_metadata(folder: Path) -> dict[str, Any]:
    try:
        return _read_json(folder / METADATA_FILE, METADATA_FILE) or {}
    except LibraryError:
        return {}


def write_metadata(folder: Path, **values: Any) -> None:
    """Update the entry's branchwise.json; written whole and swapped in, never half-written."""
    data = {**read_metadata(folder), **values}
    temporary = folder / f".{METADATA_FILE}.{uuid.uuid4().hex}"
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    temporary.replace(folder / METADATA_FILE)


def describe(folder: Path) -> ModelInfo:
    """The ModelInfo of one library entry; an entry that cannot be loaded gets a `problem`."""
    meta = read_metadata(folder)
    path = Path(meta["linked_path"]) if meta.get("linked_path") else folder
    config: dict[str, Any] = {}
    problem = None
    try:
        config = validate_folder(path)
    except LibraryError as error:
        problem = str(error)
    weights = sorted(path.glob("model*.safetensors"))
    return ModelInfo(
        id=folder.name,
        folder=folder,
        path=path,
        name=meta.get("name") or folder.name,
        architecture=str(config.get("model_type", "unknown")),
        parameters=_parameter_count(weights, config) if config else None,
        quantization=_quantization_label(weights, config) if config else "unknown",
        size_bytes=_size_on_disk(path),
        weights_bytes=sum(w.stat().st_size for w in weights),
        context_length=context_length(config),
        source=meta.get("source", "Unknown"),
        builtin=bool(meta.get("builtin")),
        linked=path != folder,
        problem=problem,
    )


def context_length(config: dict[str, Any]) -> int | None:
    for scope in (config, config.get("text_config") or {}):
        for key in _CONTEXT_KEYS:
            if isinstance(scope.get(key), int):
                return scope[key]
    return None


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


def _quantization(config: dict[str, Any]) -> dict[str, Any]:
    return config.get("quantization") or config.get("quantization_config") or {}


def _module_bits(quant: dict[str, Any], module: str) -> int:
    own = quant.get(module)
    return own["bits"] if isinstance(own, dict) and "bits" in own else quant.get("bits", 4)


def _parameter_count(weights: list[Path], config: dict[str, Any]) -> int | None:
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


_PART_NAMES = {"embed_tokens": "embeddings", "lm_head": "output"}


def _quantization_label(weights: list[Path], config: dict[str, Any]) -> str:
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


def _size_on_disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- the library --------------------------------------------------------------------------------


def list_models(models_dir: str | Path) -> list[ModelInfo]:
    """Every entry in the models folder, by display name. Hidden folders are work in progress."""
    models = Path(models_dir)
    if not models.is_dir():
        return []
    entries = [p for p in models.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return sorted((describe(p) for p in entries), key=lambda info: info.name.casefold())


def find_model(models_dir: str | Path, model_id: str) -> ModelInfo:
    return describe(_entry(models_dir, model_id))


def _entry(models_dir: str | Path, model_id: str) -> Path:
    folder = Path(models_dir) / model_id
    if model_id != folder.name or model_id.startswith(".") or not folder.is_dir():
        raise LibraryError(f"There is no model '{model_id}' in the library.")
    return folder


def rename_model(models_dir: str | Path, model_id: str, name: str) -> ModelInfo:
    """Give the model a new display name (its folder keeps its name)."""
    name = name.strip()
    if not name:
        raise LibraryError("A model's name cannot be empty.")
    folder = _entry(models_dir, model_id)
    write_metadata(folder, name=name)
    return describe(folder)


def delete_model(models_dir: str | Path, model_id: str) -> None:
    """Remove the entry. For a linked folder only the link goes; the original stays."""
    folder = _entry(models_dir, model_id)
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder)


def memory_check(info: ModelInfo, reclaimable_bytes: int = 0) -> None:
    """Refuse a model whose weights exceed the memory available now (plus whatever unloading
    the current model, `reclaimable_bytes`, would free), saying how much is needed."""
    available = psutil.virtual_memory().available + reclaimable_bytes
    if info.weights_bytes > available:
        raise LibraryError(
            f"{info.name} needs {info.weights_bytes / 1e9:.1f} GB of memory for its weights, but "
            f"only {available / 1e9:.1f} GB is available. Close other apps or choose a smaller "
            "model."
        )


# --- adding entries -----------------------------------------------------------------------------

# Work folders of an import that a quit or crash cut short (`staging` here, `.import-` in the
# GGUF importer). Partial downloads (`.download-`) are kept: a later download resumes from them.
_ABANDONED_PREFIXES = (".staging-", ".import-")


def remove_abandoned_work(models_dir: str | Path) -> list[Path]:
    """Delete work folders left by imports that never finished; call at start-up, before any
    import runs. Returns what was removed."""
    models = Path(models_dir)
    if not models.is_dir():
        return []
    abandoned = [
        p for p in models.iterdir() if p.is_dir() and p.name.startswith(_ABANDONED_PREFIXES)
    ]
    for folder in abandoned:
        shutil.rmtree(folder, ignore_errors=True)
    return abandoned



@contextmanager
def staging(models_dir: str | Path) -> Iterator[Path]:
    """A hidden work folder inside the models folder (the same disk, so `install` is a rename),
    removed on the way out whether or not its contents were installed."""
    area = Path(models_dir) / f".staging-{uuid.uuid4().hex}"
    area.mkdir(parents=True)
    try:
        yield area
    finally:
        shutil.rmtree(area, ignore_errors=True)


def install(built: Path, models_dir: str | Path, name: str) -> Path:
    """Move a finished folder into the library under a free folder name based on `name`."""
    base = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip(".-") or "model"
    final, number = Path(models_dir) / base, 2
    while final.exists():
        final, number = Path(models_dir) / f"{base}-{number}", number + 1
    built.rename(final)
    return final


def import_folder(
    source: str | Path,
    models_dir: str | Path,
    link: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Add an MLX model folder to the library, after checking it; return the new entry.

    With `link`, the entry points at the folder where it is (nothing is copied, and deleting the
    entry leaves the folder alone); otherwise the model's files are copied (progress in bytes,
    cancellable). Raises LibraryError; a failed or cancelled copy adds nothing.
    """
    from app.model_check import check_model_folder  # it imports this module

    folder = Path(source).expanduser().resolve()
    validate_folder(folder)
    check_model_folder(folder, cancel)
    try:
        with staging(models_dir) as area:
            entry = area / "entry"
            entry.mkdir()
            if link:
                write_metadata(entry, source=f"Linked to {folder}", linked_path=str(folder))
            else:
                _copy_model_files(folder, entry, progress, cancel)
                write_metadata(entry, source=f"Copied from {folder}")
            return install(entry, models_dir, folder.name)
    except OSError as error:
        raise _disk_error(error, models_dir) from error


def _copy_model_files(
    source: Path, target: Path, progress: Progress | None, cancel: threading.Event | None
) -> None:
    files = [
        p
        for p in sorted(source.iterdir())
        if p.is_file() and any(fnmatch.fnmatch(p.name, pattern) for pattern in MODEL_FILE_PATTERNS)
    ]
    total, done = sum(p.stat().st_size for p in files), 0
    for file in files:
        with file.open("rb") as reader, (target / file.name).open("wb") as writer:
            while chunk := reader.read(_COPY_CHUNK):
                if cancel is not None and cancel.is_set():
                    raise Cancelled("The import was cancelled.")
                writer.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)


def _disk_error(error: OSError, models_dir: str | Path) -> LibraryError:
    if error.errno == errno.ENOSPC:
        free = shutil.disk_usage(models_dir).free / 1e9
        return LibraryError(
            f"The disk is full ({free:.2f} GB free in {models_dir}); nothing was added. "
            "Free some space and try again."
        )
    return LibraryError(f"Could not write to {models_dir}: {error.strerror or error}")


def import_gguf_file(
    gguf_path: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    name: str | None = None,
    builtin: bool = False,
) -> Path:
    """Import a GGUF file as a new library entry, in a child process (app/isolated.py) so that a
    file that crashes MLX's reader cannot take the app down. Call it on the inference worker:
    it imports `inference` for its errors.

    Raises inference's ModelLoadError for a file that cannot be imported; nothing is added then.
    """
    from inference.errors import ModelLoadError
    from inference.gguf_import import ImportCancelled

    source = Path(gguf_path).expanduser()
    with staging(models_dir) as area:
        folder = run_isolated(
            "inference.gguf_import:import_gguf", source, area, label=source.name,
            failure=ModelLoadError, cancelled=ImportCancelled, progress=progress, cancel=cancel,
        )
        label = f"Built in ({source.name})" if builtin else f"Imported from {source}"
        write_metadata(folder, name=name or source.stem, source=label, builtin=builtin)
        return install(folder, models_dir, folder.name)


def ensure_default_model(models_dir: str | Path, progress: Progress | None = None) -> Path:
    """The built-in default model's folder, imported from the embedded SmolLM2 GGUF the first
    time (no network needed) and reused afterwards. Runs MLX the first time: worker thread.
    It brings the model back if the person deleted it, so call it when there is no model to
    open, not on every start."""
    for info in list_models(models_dir):
        if info.builtin and info.problem is None:
            return info.path
    source = embedded_gguf_path()
    if source is None:
        raise LibraryError("This installation has no built-in model; add one from the library.")
    return import_gguf_file(source, models_dir, progress, name=DEFAULT_MODEL_NAME, builtin=True)

