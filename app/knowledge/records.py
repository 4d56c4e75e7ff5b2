"""What the knowledge index reports, as plain values: its folders (`Collection`, their
`CollectionStatus`), their documents (`DocumentInfo`), a search's `ChunkHit`s, and how an
index run goes (`IndexProgress`) and ends (`SyncReport`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class KnowledgeError(Exception):
    """A refusal the person reads: an unknown or duplicate name, a folder that is not there."""


class SyncCancelled(KnowledgeError):
    """Indexing stopped when asked; every file finished before stays indexed."""


class CollectionState(StrEnum):
    NEW = "new"  # added, never indexed
    INDEXING = "indexing"  # a run is under way, or was stopped (the next one resumes it)
    READY = "ready"
    OFFLINE = "offline"  # its folder is not there (an unplugged disk): the index is kept


class DocumentState(StrEnum):
    INDEXED = "indexed"
    NO_TEXT = "no_text"  # read, and nothing to search in it (a scan, an empty file)
    FAILED = "failed"  # could not be read: `failure` says why


@dataclass(frozen=True, slots=True)
class Collection:
    """A knowledge folder: a name, the folder (or one file) it indexes, and its state."""

    id: int
    name: str
    root: str  # absolute
    follow_links: bool
    state: CollectionState
    embedding_model: str | None
    generation: int
    synced_at: float | None


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    path: str  # absolute
    format: str
    size: int
    state: DocumentState
    failure: str | None  # why it failed or has no text
    chunks: int
    chars: int
    text_sha256: str


@dataclass(frozen=True, slots=True)
class CollectionStatus:
    collection: Collection
    files: int  # documents with text to search
    chunks: int
    embedded_chunks: int  # chunks with a vector of `collection.embedding_model`
    failed: tuple[tuple[str, str], ...]  # (path, reason): failures and files without text


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One chunk a search found; `score` is the fused rank score (larger is better)."""

    collection: str
    path: str
    document_id: int
    chunk_id: int
    seq: int
    page: int | None
    heading: str
    start: int
    end: int
    text: str
    score: float
    document_sha256: str
    document_chars: int


class IndexPhase(StrEnum):
    SCANNING = "scanning"  # listing the folder
    READING = "reading"  # reading new and changed files
    EMBEDDING = "embedding"  # computing vectors for chunks without one
    DONE = "done"


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """How far an index run is. `files_total` counts the files this run reads (new or changed
    ones; unchanged files are not read again); `seconds_left` is None until it can be told."""

    collection: str
    phase: IndexPhase
    files_done: int
    files_total: int
    chunks: int  # written this run
    failures: int
    embedded: int
    to_embed: int
    current: str  # the file being read, "" when none
    paused: bool  # waiting while a reply generates
    seconds_left: float | None


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one index run did."""

    collection: str
    state: CollectionState
    added: int
    changed: int
    renamed: int
    removed: int
    unchanged: int
    failed: tuple[tuple[str, str], ...]  # (path, reason), this run's
    skipped: tuple[tuple[str, str], ...]  # (path, reason): links not followed, unlisted folders
    chunks_written: int
    embedded: int
    # The folders listed, shallowest first, at most MAX_WATCHED: what a watcher watches.
    folders: tuple[str, ...] = ()


# Watching a folder holds a file descriptor on macOS (kqueue), where an app may open 256 by
# default: deeper folders are left to the periodic rescan.
MAX_WATCHED = 200
