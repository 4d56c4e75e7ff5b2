"""What names a loaded model for a reply's provenance: the folder, a digest of its weights, the
form they were computed in, a digest of its chat template, and the versions of the code that ran
it. Plain values, computed once per load; a replay compares them with what it finds then.

The weights' digest hashes each file's name, size and 17 samples of 1 MiB (its start, its end
and 15 evenly between), not every byte: it must be cheap at every load of a model of many
gigabytes, and a re-quantized, re-converted or replaced file differs in every sample. It ignores
the modification time, so a copied folder names the same weights.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.loading.model_files import WEIGHTS_PATTERN, is_model_file

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

_SAMPLE = 1 << 20
_SAMPLES = 17
# The distributions whose versions change what a model computes, by the name they are recorded as.
_PACKAGES = {"branchwise": "branchwise", "mlx": "mlx", "mlx_lm": "mlx-lm"}


def model_identity(loaded: LoadedModel) -> dict[str, Any]:
    """{"model": {"name", "path", "weights_digest", "files_digest", "form", "layout"},
    "template_digest", "versions"}."""
    return {
        "model": {
            "name": loaded.model_id,
            "path": str(loaded.path.resolve()),
            "weights_digest": weights_digest(loaded.path),
            "files_digest": files_digest(loaded.path),
            "form": loaded.weights_form,
            # Transposed or as stored: the matrices' strides change BLAS's rounding.
            "layout": loaded.matrix_layout.layout,
        },
        "template_digest": template_digest(loaded.tokenizer.chat_template),
        "versions": versions(),
    }


def weights_digest(folder: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(folder.glob(WEIGHTS_PATTERN)):
        size = path.stat().st_size
        digest.update(f"{path.name}\0{size}\0".encode())
        with path.open("rb") as file:
            for offset in _sample_offsets(size):
                file.seek(offset)
                digest.update(file.read(_SAMPLE))
    return digest.hexdigest()


def files_digest(folder: Path) -> str:
    """A digest of the folder's small model files (config.json, the tokenizer and its
    template), read whole: a change to any of them changes what a model in memory no longer is."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(folder.iterdir()):
        if path.is_file() and is_model_file(path.name) and not path.match(WEIGHTS_PATTERN):
            digest.update(f"{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def unchanged_on_disk(identity: dict[str, Any], folder: Path) -> bool:
    """Whether the folder still holds the model `identity` was taken of at its load: a model
    in memory is then the one on disk."""
    model: dict[str, Any] = identity.get("model") or {}
    return model.get("weights_digest") == weights_digest(folder) and model.get(
        "files_digest"
    ) == files_digest(folder)


def template_digest(template: str | dict[str, str] | None) -> str | None:
    """A digest of the chat template's source (None: the tokenizer has none). A tokenizer may
    hold several named templates (a dict): all of them are hashed, in name order."""
    if template is None:
        return None
    text = template if isinstance(template, str) else repr(sorted(template.items()))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for key, name in _PACKAGES.items():
        try:
            found[key] = version(name)
        except PackageNotFoundError:
            found[key] = None
    return found


def _sample_offsets(size: int) -> list[int]:
    if size <= _SAMPLE * _SAMPLES:
        return list(range(0, size, _SAMPLE))
    last = size - _SAMPLE
    return sorted({last * i // (_SAMPLES - 1) for i in range(_SAMPLES)})
