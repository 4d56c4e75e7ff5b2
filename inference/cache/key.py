"""What a saved cache is keyed by: everything that changes what its numbers mean.

A cache computed by one model, tokenizer, template, mlx-lm version or KV dtype is garbage for
another, so its files are filed under a hash of all of them. The model's identity is its small
files (config.json, tokenizer, chat template) plus a fingerprint of each weight file (name,
size, modification time, and the bytes of its first and last MiB): enough to notice a model
updated in place without reading gigabytes at every start.
"""

from __future__ import annotations

import hashlib
from fnmatch import fnmatch
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlx.core as mx

from inference.cache.files import FORMAT
from inference.cache.layers import class_names, leaves, state_arrays
from inference.cache.stack import CacheStack
from inference.cpu.fast_blas import arithmetic
from inference.cpu.weight_layout import layout
from inference.loading.model_files import WEIGHTS_PATTERN, is_model_file

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

_SAMPLE = 1 << 20


def model_slug(loaded: LoadedModel) -> str:
    """A folder name for one model's caches: a hash of where the model lives."""
    return hashlib.blake2b(str(loaded.path.resolve()).encode(), digest_size=8).hexdigest()


def cache_key(loaded: LoadedModel) -> dict[str, Any]:
    folder = loaded.path
    stack = CacheStack.empty(loaded.model)
    return {
        "format": FORMAT,
        # config.json, the tokenizer, its chat template and every other small model file.
        "files": [
            (p.name, _file_hash(p))
            for p in sorted(folder.iterdir())
            if p.is_file() and is_model_file(p.name) and not fnmatch(p.name, WEIGHTS_PATTERN)
        ],
        "weights": [_fingerprint(p) for p in sorted(folder.glob(WEIGHTS_PATTERN))],
        "mlx_lm": version("mlx-lm"),
        "kv_dtype": _kv_dtype(loaded, stack),
        # float32 from 4-bit computes other numbers than the 4-bit weights (inference.cpu).
        "weights_form": loaded.weights_form,
        # Other BLAS kernels or matrix strides sum in another order: other rounding.
        "arithmetic": [arithmetic(), layout(loaded.model)],
        "classes": class_names(stack.caches),
    }


def _kv_dtype(loaded: LoadedModel, stack: CacheStack) -> str:
    """The dtype the model's caches hold, read off a one-token forward pass."""
    loaded.model(mx.array([[0]]), cache=stack.caches)
    arrays = [a for leaf in leaves(stack.caches) for a in state_arrays(leaf.state)]
    mx.eval(arrays)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
    return ",".join(sorted({str(a.dtype) for a in arrays}))


def _file_hash(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()


def _fingerprint(path: Path) -> list[Any]:
    stat = path.stat()
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as file:
        digest.update(file.read(_SAMPLE))
        if stat.st_size > _SAMPLE:
            file.seek(max(_SAMPLE, stat.st_size - _SAMPLE))
            digest.update(file.read(_SAMPLE))
    return [path.name, stat.st_size, stat.st_mtime_ns, digest.hexdigest()]
