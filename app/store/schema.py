"""The conversation store's schema, as forward migrations keyed on `PRAGMA user_version`.

`MIGRATIONS[n]` takes a database from version n to n + 1. Each runs in one transaction together
with the version bump, so a failed migration leaves the file at the version it had. Append new
steps; never edit a released one.

Full-text search uses external-content FTS5 tables kept in sync by triggers. A reply still
streaming is left out of the index (its text changes every second, and nobody searches a reply
being written); it enters the index when it is finished or found interrupted. The triggers test
the same status on the way in and out, because FTS5's 'delete' must be given exactly what was
indexed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from app.store.table_rebuild import rebuild_table

_V1 = """
CREATE TABLE conversations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    title          TEXT    NOT NULL,
    created_at     REAL    NOT NULL,
    updated_at     REAL    NOT NULL,
    system_prompt  TEXT    NOT NULL DEFAULT '',
    model_id       TEXT,
    params         TEXT    NOT NULL DEFAULT '{}',
    active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    archived       INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    deleted_at     REAL,
    -- Counts visits to leaves; messages.visit holds the count at a leaf's latest visit, so
    -- "most recently visited" never depends on the wall clock.
    visit_clock    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_by_active_leaf ON conversations(active_leaf_id);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    -- No cascade here: a subtree is deleted in one statement (a cascade would recurse once per
    -- level and hit SQLite's trigger depth limit on long conversations).
    parent_id       INTEGER REFERENCES messages(id),
    role            TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content         TEXT    NOT NULL,
    created_at      REAL    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN
                        ('complete', 'streaming', 'stopped', 'error', 'interrupted')),
    model_id        TEXT,
    params          TEXT    NOT NULL DEFAULT '{}',
    stats           TEXT    NOT NULL DEFAULT '{}',
    error           TEXT,
    visit           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX messages_by_parent ON messages(parent_id);
CREATE INDEX messages_by_conversation ON messages(conversation_id, parent_id);
CREATE INDEX messages_streaming ON messages(status) WHERE status = 'streaming';

CREATE VIRTUAL TABLE message_search USING fts5(
    content, content='messages', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2', prefix='3 4'
);
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
WHEN new.status != 'streaming' BEGIN
    INSERT INTO message_search(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER message_search_delete AFTER DELETE ON messages
WHEN old.status != 'streaming' BEGIN
    INSERT INTO message_search(message_search, rowid, content)
        VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER message_search_update AFTER UPDATE OF content, status ON messages BEGIN
    INSERT INTO message_search(message_search, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status != 'streaming';
    INSERT INTO message_search(rowid, content)
        SELECT new.id, new.content WHERE new.status != 'streaming';
END;

CREATE VIRTUAL TABLE title_search USING fts5(
    title, content='conversations', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2', prefix='3 4'
);
CREATE TRIGGER title_search_insert AFTER INSERT ON conversations BEGIN
    INSERT INTO title_search(rowid, title) VALUES (new.id, new.title);
END;
CREATE TRIGGER title_search_delete AFTER DELETE ON conversations BEGIN
    INSERT INTO title_search(title_search, rowid, title) VALUES ('delete', old.id, old.title);
END;
CREATE TRIGGER title_search_update AFTER UPDATE OF title ON conversations BEGIN
    INSERT INTO title_search(title_search, rowid, title) VALUES ('delete', old.id, old.title);
    INSERT INTO title_search(rowid, title) VALUES (new.id, new.title);
END;
"""

# The composer's unsent text, per conversation: typing survives a switch, a restart and a crash.
_V2 = """
ALTER TABLE conversations ADD COLUMN draft TEXT NOT NULL DEFAULT '';
"""


# A reply's reasoning is kept apart from its answer (shown folded, left out of search: the
# index triggers read `content` only); a message's attached files as a JSON list of
# {"name", "size", "tokens", "text"}, so the conversation never reads the files again.
_V3_REASONING_ATTACHMENTS = """
ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
"""

# Chat history brought in from other apps (app.importers): each imported conversation and
# message keeps the id it had at its source, so importing the same export again adds nothing
# and a longer one adds only what is new; each import is a batch that can be undone. A
# message's `trace` holds tool code and output of an imported turn: shown folded, never sent
# to a model and left out of search.
_V4_IMPORTS = """
CREATE TABLE import_batches (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL    NOT NULL,
    label      TEXT    NOT NULL DEFAULT ''
);
ALTER TABLE conversations ADD COLUMN source_format TEXT;
ALTER TABLE conversations ADD COLUMN source_id TEXT;
ALTER TABLE conversations ADD COLUMN import_batch INTEGER REFERENCES import_batches(id);
CREATE UNIQUE INDEX conversations_by_source ON conversations(source_format, source_id)
    WHERE source_id IS NOT NULL;
CREATE INDEX conversations_by_batch ON conversations(import_batch)
    WHERE import_batch IS NOT NULL;
ALTER TABLE messages ADD COLUMN source_id TEXT;
ALTER TABLE messages ADD COLUMN import_batch INTEGER REFERENCES import_batches(id);
ALTER TABLE messages ADD COLUMN trace TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX messages_by_source ON messages(conversation_id, source_id)
    WHERE source_id IS NOT NULL;
CREATE INDEX messages_by_batch ON messages(import_batch) WHERE import_batch IS NOT NULL;
"""


def _v5_tool_messages(conn: sqlite3.Connection) -> None:
    """Tool use in the tree: a `tool` role (a CHECK constraint, so the table is rebuilt; every
    row keeps its id), a reply's calls as a JSON list of {"id", "name", "arguments"}, and for a
    tool message the call it answers and the tool's name. A result's text is `content`, so
    search finds it; its duration, size and server go in `stats`."""
    rebuild_table(
        conn,
        "messages",
        "CHECK (role IN ('user', 'assistant'))",
        "CHECK (role IN ('user', 'assistant', 'tool'))",
    )
    conn.executescript(
        """
        ALTER TABLE messages ADD COLUMN tool_calls TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE messages ADD COLUMN tool_call_id TEXT;
        ALTER TABLE messages ADD COLUMN tool_name TEXT;
        """
    )


# Where each reply came from (app.store.provenance): the model, its weights' and template's
# digests, the sampling settings with the seed actually drawn, the tools, the context options,
# the versions, and the generated token ids, so a replay can compare token for token. JSON, as
# `params` and `stats` are: it is read whole and never queried.
_V6_PROVENANCE = """
ALTER TABLE messages ADD COLUMN provenance TEXT NOT NULL DEFAULT '{}';
"""


def _v7_summaries(conn: sqlite3.Connection) -> None:
    """Compaction as a branch (`app.store.compaction`): a `summary` role (a CHECK constraint,
    so the table is rebuilt; every row keeps its id) for a summary of an earlier path, and a
    message's `compaction` record as JSON: for a summary, the messages it covers and keeps and
    the tokens it stands for; for a kept turn, the message it copies."""
    rebuild_table(
        conn,
        "messages",
        "CHECK (role IN ('user', 'assistant', 'tool'))",
        "CHECK (role IN ('user', 'assistant', 'tool', 'summary'))",
    )
    conn.execute("ALTER TABLE messages ADD COLUMN compaction TEXT NOT NULL DEFAULT '{}'")


# A step is SQL text, or a function for what SQL alone cannot say (a table rebuilt from its
# stored definition). Either runs inside the migration's transaction, foreign keys off.
Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[Migration, ...] = (
    _V1,
    _V2,
    _V3_REASONING_ATTACHMENTS,
    _V4_IMPORTS,
    _v5_tool_messages,
    _V6_PROVENANCE,
    _v7_summaries,
)


def latest_version() -> int:
    return len(MIGRATIONS)
