"""Changing a table's constraints the way SQLite documents it (the "12 steps" of
https://www.sqlite.org/lang_altertable.html#otheralter): a new table from the old one's own
`CREATE TABLE` text with one change, every row copied with its id, the old table dropped, the new
one renamed, then its indexes and triggers made again from their saved text.

Working from the stored schema text (not a copy written here) keeps every column another
migration may have added since, in order, so `INSERT … SELECT *` copies rows exactly.

The caller runs this inside the migration's transaction with foreign keys OFF (SQLite ignores
that pragma inside a transaction, so it is set before) and checks `PRAGMA foreign_key_check`
before committing (`app.store.database_file`).
"""

from __future__ import annotations

import re
import sqlite3

_TEMP_SUFFIX = "__rebuilt"


class RebuildError(RuntimeError):
    """The table's stored definition is not what the migration expects; nothing was changed."""


def rebuild_table(conn: sqlite3.Connection, table: str, old: str, new: str) -> None:
    """Re-create `table` with the text `old` in its definition replaced by `new` (which must
    occur exactly once), keeping its rows, ids, indexes and triggers."""
    row = conn.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if row is None:
        raise RebuildError(f"There is no table {table!r} to rebuild.")
    definition: str = row[0]
    if definition.count(old) != 1:
        raise RebuildError(f"The definition of {table!r} does not hold {old!r} exactly once.")
    # Indexes and triggers go with the old table; their text brings them back (step 9).
    saved = [
        sql
        for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger')"
            " AND sql IS NOT NULL ORDER BY type, name",
            (table,),
        )
    ]
    temp = table + _TEMP_SUFFIX
    header = re.compile(rf"^\s*CREATE\s+TABLE\s+(\"?){re.escape(table)}\1", re.IGNORECASE)
    created, count = header.subn(f'CREATE TABLE "{temp}"', definition.replace(old, new), count=1)
    if count != 1:
        raise RebuildError(f"The definition of {table!r} does not start as expected.")
    conn.execute(created)
    conn.execute(f'INSERT INTO "{temp}" SELECT * FROM "{table}"')
    conn.execute(f'DROP TABLE "{table}"')
    conn.execute(f'ALTER TABLE "{temp}" RENAME TO "{table}"')
    for sql in saved:
        conn.execute(sql)
