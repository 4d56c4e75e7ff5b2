"""Saved cache segments on disk: one safetensors file per trie node, in a folder per cache key.

A file holds one node's key/value segments and, where the node has one, its checkpoint. Files
are content-addressed by a chained hash of token ids (a node's name hashes its parent's name and
its own edge), so the same prefix always lands on the same name. They live in a folder named by
a hash of everything that changes what a cache means: the format version, the model's identity
(config and a fingerprint of its weight files), the mlx-lm version, the tokenizer and chat
template, the KV dtype and the per-layer cache classes. A change of any of them is a miss, and
folders of the same model under older keys are removed when an engine opens the folder.

`index.json` lists every file with its tokens, hash, size, owners and last use, so start-up reads
one small file and the tensors load lazily, on the first request that can use them, after their
bytes are checked against the recorded hash and their tokens against the request's. A damaged,
truncated or foreign file is removed, never loaded. Every write goes to a temporary file that is
renamed into place, so a crash never leaves a file that later loads.

Worker thread only (it makes and reads MLX arrays).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import mlx.core as mx

FORMAT = "branchwise-cache-1"
INDEX = "index.json"
ROOT_NAME = hashlib.blake2b(b"", digest_size=16).hexdigest()
# The default disk budget: a quarter of the free space, and never more than this.
MAX_DEFAULT_DISK_BUDGET = 30 * 2**30


def chained_name(parent: str, tokens: Iterable[int]) -> str:
    """The content address of a node: its parent's name hashed with its own edge's tokens."""
    digest = hashlib.blake2b(parent.encode(), digest_size=16)
    digest.update(json.dumps(list(tokens)).encode())
    return digest.hexdigest()


def default_disk_budget(folder: Path) -> int:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    return min(MAX_DEFAULT_DISK_BUDGET, free // 4)


@dataclass
class Record:
    """One saved node, as index.json lists it."""

    name: str
    parent: str
    start: int
    tokens: list[int]
    size: int
    digest: str
    has_checkpoint: bool
    last_used: float
    owners: list[Any] = field(default_factory=list[Any])

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.start}.safetensors"


class CacheFileError(Exception):
    """A saved file cannot be used (damaged, truncated, foreign): it has been removed."""


class CacheFolder:
    """The folder of one cache key: its files and their index."""

    def __init__(self, root: Path, model_slug: str, key: dict[str, Any]) -> None:
        self.key_hash = hashlib.blake2b(
            json.dumps(key, sort_keys=True).encode(), digest_size=16
        ).hexdigest()
        self.model_root = root / model_slug
        self.folder = self.model_root / self.key_hash
        self.records: dict[str, Record] = {}

    # --- opening ----------------------------------------------------------------------------

    def open(self) -> None:
        """Create the folder, drop the same model's folders under other keys (stale: the model,
        mlx-lm or the tokenizer changed), read the index and drop what it does not vouch for."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for other in self.model_root.iterdir():
            if other != self.folder:
                _remove(other)
        self.records = self._read_index()
        listed = {r.file_name for r in self.records.values()} | {INDEX}
        for path in self.folder.iterdir():
            if path.name not in listed:
                _remove(path)  # a temporary file of a crashed write, or an unlisted one
        for name, record in list(self.records.items()):
            path = self.folder / record.file_name
            if not path.is_file() or path.stat().st_size != record.size:
                self.records.pop(name)
                _remove(path)

    def _read_index(self) -> dict[str, Record]:
        try:
            data = json.loads((self.folder / INDEX).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError("another format")
            records = [Record(**item) for item in data["records"]]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            # An index that cannot be read vouches for nothing: start again, empty.
            for path in self.folder.iterdir():
                _remove(path)
            return {}
        return {r.name: r for r in records}

    def write_index(self) -> None:
        data = {"format": FORMAT, "records": [asdict(r) for r in self.records.values()]}
        _atomic_write(self.folder / INDEX, json.dumps(data).encode())

    # --- files ------------------------------------------------------------------------------

    def bytes_used(self) -> int:
        return sum(r.size for r in self.records.values())

    def save(
        self,
        name: str,
        parent: str,
        start: int,
        tokens: list[int],
        arrays: dict[str, mx.array],
        skeleton: Any,
        owners: Iterable[Hashable],
        last_used: float,
    ) -> Record:
        """Write one node's arrays (temporary file, then rename) and list it. Raises OSError
        (a full disk, say) with nothing half-written left behind."""
        metadata = {
            "format": FORMAT,
            "name": name,
            "start": str(start),
            "tokens": json.dumps(tokens),
            "skeleton": json.dumps(skeleton),
        }
        record = Record(
            name=name,
            parent=parent,
            start=start,
            tokens=list(tokens),
            size=0,
            digest="",
            has_checkpoint=bool(skeleton),
            last_used=last_used,
            owners=[o for o in owners if isinstance(o, int | str)],
        )
        final = self.folder / record.file_name
        temporary = self.folder / f".{uuid.uuid4().hex}.tmp.safetensors"
        try:
            mx.save_safetensors(str(temporary), arrays, metadata)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: no return type
            record.digest = _digest(temporary)
            record.size = temporary.stat().st_size
            os.replace(temporary, final)
        except BaseException:
            _remove(temporary)
            raise
        old = self.records.get(name)
        if old is not None and old.file_name != record.file_name:
            _remove(self.folder / old.file_name)
        self.records[name] = record
        return record

    def load(self, record: Record) -> tuple[dict[str, mx.array], Any]:
        """A saved node's arrays and checkpoint skeleton, after checking its bytes and tokens.
        A file that fails any check is removed and CacheFileError raised."""
        path = self.folder / record.file_name
        try:
            if _digest(path) != record.digest:
                raise ValueError("its bytes changed since it was written")
            # mlx's stub gives one return type for every format and flag.
            loaded = mx.load(str(path), return_metadata=True)
            arrays, metadata = cast("tuple[dict[str, mx.array], dict[str, str]]", loaded)
            if metadata.get("format") != FORMAT or metadata.get("name") != record.name:
                raise ValueError("it belongs to another cache")
            if json.loads(metadata["tokens"]) != record.tokens:
                raise ValueError("its tokens do not match")
            skeleton = json.loads(metadata["skeleton"])
        except (OSError, ValueError, KeyError, RuntimeError, TypeError) as error:
            self.drop(record)
            raise CacheFileError(f"saved cache {path.name} was unusable ({error})") from error
        return arrays, skeleton

    def drop(self, record: Record) -> None:
        self.records.pop(record.name, None)
        _remove(self.folder / record.file_name)

    def clear(self) -> None:
        for record in list(self.records.values()):
            self.drop(record)
        self.write_index()


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under `folder` (0 when it does not exist)."""
    if not folder.is_dir():
        return 0
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total


def _digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as file:
        while chunk := file.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{uuid.uuid4().hex}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
