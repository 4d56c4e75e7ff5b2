"""The knowledge index's SQLite file: opening it (as the conversation store's is opened, with
the index's own schema), write transactions, and SQLite's own errors as `KnowledgeError`.

A connection belongs to the thread that opened it: each thread that reads or writes the index
(the GUI thread, an index run, the command line) opens its own, cheaply (WAL: readers never
wait for the writer, and one write transaction per file keeps each short).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.knowledge.records import KnowledgeError
from app.knowledge.schema import KNOWLEDGE_DATABASE
from app.store.database_file import open_database
from app.store.records import StoreError


def open_knowledge_database(path: Path) -> sqlite3.Connection:
    """A connection to an up-to-date index at `path` (made if missing; a damaged file is set
    aside and a new one made: the index is made again from the files). KnowledgeError if the
    file cannot be used."""
    try:
        conn, _set_aside = open_database(path, KNOWLEDGE_DATABASE)
    except StoreError as error:
        raise KnowledgeError(str(error)) from error
    return conn


@contextmanager
def sqlite_errors() -> Iterator[None]:
    """SQLite's errors (a full disk, a file locked by another program) as KnowledgeError."""
    try:
        yield
    except sqlite3.Error as error:
        raise KnowledgeError(f"The knowledge index could not be used: {error}.") from error


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed on leaving, rolled back on any error."""
    with sqlite_errors():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
