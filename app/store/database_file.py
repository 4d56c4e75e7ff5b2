"""Opening the conversation database file: connection settings, refusing a newer file, a backup
before each migration, and setting a corrupt file aside so the app still starts; and a snapshot
copy of a live file, for work that must not change it (a dry-run import).

Another of the app's databases (the knowledge index, `app.knowledge`) opens the same way with a
`DatabaseKind` of its own: what it is called in messages, its migrations, the table checked at
each open."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from app.kept_files import free_name
from app.store import schema as store_schema
from app.store.records import NewerDatabaseError, StoreError

BUSY_TIMEOUT_MS = 5000
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
# SQLite keeps a database's recent writes in these companion files; they travel with it.
_COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class DatabaseKind:
    """One of the app's database files: `noun` names it in messages ("the conversation
    database"), `migrations()` gives its steps as `app.store.schema.MIGRATIONS` are (looked up
    at each open), `checked_table` is the table `PRAGMA quick_check` reads at each open (what
    is shown first)."""

    noun: str
    migrations: Callable[[], Sequence[store_schema.Migration]]
    checked_table: str


CONVERSATIONS = DatabaseKind(
    "conversation database", lambda: store_schema.MIGRATIONS, checked_table="conversations"
)


class _CorruptDatabase(Exception):
    pass


def open_database(
    path: Path, kind: DatabaseKind = CONVERSATIONS
) -> tuple[sqlite3.Connection, Path | None]:
    """A connection to an up-to-date database at `path`, and where a corrupt file was moved (or
    None). Raises NewerDatabaseError or StoreError; neither changes the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"Could not create the folder for {path}: {exc}.") from exc
    try:
        return _connect(path, kind), None
    except _CorruptDatabase:
        moved = _move_aside(path, kind)
    try:
        return _connect(path, kind), moved
    except _CorruptDatabase as exc:
        raise StoreError(f"Could not create a new {kind.noun} at {path}.") from exc


def _connect(path: Path, kind: DatabaseKind) -> sqlite3.Connection:
    try:
        # autocommit=True: SQLite's own mode, so every transaction here is an explicit BEGIN.
        conn = sqlite3.connect(path, autocommit=True)
    except sqlite3.Error as exc:
        raise _cannot_open(path, kind, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = _user_version(conn)
        latest = len(kind.migrations())
        if version > latest:
            raise NewerDatabaseError(
                f"The {kind.noun} {path} was written by a newer version of Branchwise "
                f"(schema {version}; this version understands up to {latest}). It was left "
                "unchanged; please update Branchwise to open it."
            )
        # The whole-file check reads every page (0.7 s at 100,000 messages here), too slow for
        # each start. This one reads the schema and the conversation list, what the window
        # shows first; damage elsewhere surfaces as a StoreError where it is met.
        quick_check = f"PRAGMA quick_check({kind.checked_table})"
        if version > 0 and conn.execute(quick_check).fetchall() != [("ok",)]:
            raise _CorruptDatabase(path)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < latest:
            if version > 0:
                _backup(conn, path, version)
            # Foreign keys stay off while migrating: a step may rebuild a table that others
            # refer to (SQLite's documented procedure); each step checks them before it commits.
            _migrate(conn, kind)
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if exc.sqlite_errorcode & 0xFF in _CORRUPT_CODES:
            raise _CorruptDatabase(path) from exc
        raise _cannot_open(path, kind, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _cannot_open(path: Path, kind: DatabaseKind, exc: sqlite3.Error) -> StoreError:
    return StoreError(f"Could not open the {kind.noun} {path}: {exc}.")


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _migrate(conn: sqlite3.Connection, kind: DatabaseKind) -> None:
    for target, script in enumerate(kind.migrations(), start=1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another instance may have migrated meanwhile.
            if _user_version(conn) < target:
                if isinstance(script, str):
                    conn.executescript(script)
                else:
                    script(conn)
                broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise StoreError(
                        f"Upgrading the {kind.noun} to schema {target} would break "
                        f"{len(broken)} links between its rows; it was left at schema "
                        f"{target - 1}."
                    )
                conn.execute(f"PRAGMA user_version = {target}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _backup(conn: sqlite3.Connection, path: Path, version: int) -> Path:
    target = free_name(path, f"v{version}-backup")
    with closing(sqlite3.connect(target)) as copy:
        conn.backup(copy)
    return target


def _move_aside(path: Path, kind: DatabaseKind) -> Path:
    target = free_name(path, "corrupt")
    try:
        path.rename(target)
        for suffix in _COMPANION_SUFFIXES:
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                companion.rename(target.with_name(target.name + suffix))
    except OSError as exc:
        raise StoreError(
            f"The {kind.noun} {path} is damaged and could not be moved aside: {exc}."
        ) from exc
    return target


def snapshot(path: Path, target: Path) -> None:
    """Copy the existing database at `path` to `target` as one consistent state, even while
    the app writes to it. `path` is only read: neither migrated nor set aside. (Not opened
    with mode=ro: a read-only reader of a WAL file leaves its -wal and -shm files behind.)"""
    try:
        with closing(sqlite3.connect(path)) as source:
            source.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            with closing(sqlite3.connect(target)) as copy:
                source.backup(copy)
    except sqlite3.Error as exc:
        raise StoreError(f"Could not read the conversation database {path}: {exc}.") from exc
