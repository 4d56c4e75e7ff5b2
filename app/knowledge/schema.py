"""The knowledge index's database, `knowledge.db` beside the conversations: its schema, as
forward migrations keyed on `PRAGMA user_version` (opened, checked, backed up and migrated as
the conversation store is: `app.store.database_file`). Append new steps; never edit a released
one.

It holds only what can be made again from a person's files (their extracted text, cut into
chunks, and the chunks' vectors), never the files themselves. Chunk text is searched through an
external-content FTS5 table kept in step by triggers (bm25 ranking; Porter stemming, so "index"
finds "indexing"). Vectors are float16 blobs, one per chunk and embedding model; a chunk's rows
go with it (`ON DELETE CASCADE`, which fires the FTS5 trigger too).
"""

from __future__ import annotations

from app.store.database_file import DatabaseKind
from app.store.schema import Migration

_V1 = """
CREATE TABLE collections (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE,
    root            TEXT    NOT NULL,
    options         TEXT    NOT NULL DEFAULT '{}',
    state           TEXT    NOT NULL DEFAULT 'new'
                        CHECK (state IN ('new', 'indexing', 'ready', 'offline')),
    created_at      REAL    NOT NULL,
    synced_at       REAL,
    -- The embedding model its vectors are for (NULL: BM25 alone).
    embedding_model TEXT,
    -- Counts changes to its documents, chunks and vectors: what is kept in memory (the vector
    -- matrix) is read again when this has moved on.
    generation      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE documents (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    collection  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    path        TEXT    NOT NULL,
    format      TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,  -- of the file's bytes: a rename is found by it
    text_sha256 TEXT    NOT NULL DEFAULT '',  -- of the extracted text: excerpts keep it
    chars       INTEGER NOT NULL DEFAULT 0,  -- the extracted text's length
    state       TEXT    NOT NULL CHECK (state IN ('indexed', 'no_text', 'failed')),
    failure     TEXT,
    indexed_at  REAL    NOT NULL,
    UNIQUE (collection, path)
);
CREATE INDEX documents_by_content ON documents(collection, size, sha256);

CREATE TABLE chunks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    document   INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    page       INTEGER,
    heading    TEXT    NOT NULL,
    span_start INTEGER NOT NULL,
    span_end   INTEGER NOT NULL,
    text       TEXT    NOT NULL,
    UNIQUE (document, seq)
);

CREATE VIRTUAL TABLE chunk_search USING fts5(
    text, content='chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunk_search_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunk_search(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER chunk_search_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_search(chunk_search, rowid, text) VALUES ('delete', old.id, old.text);
END;

CREATE TABLE vectors (
    chunk      INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    model      TEXT    NOT NULL,
    -- The chunk's folder, repeated here: a folder's vectors of a model are read by one index
    -- scan, not a join through chunks and documents.
    collection INTEGER NOT NULL,
    vector     BLOB    NOT NULL,  -- float16, little-endian
    PRIMARY KEY (chunk, model)
) WITHOUT ROWID;
CREATE INDEX vectors_by_folder ON vectors(collection, model, chunk);
"""

MIGRATIONS: tuple[Migration, ...] = (_V1,)

KNOWLEDGE_DATABASE = DatabaseKind(
    "knowledge index", lambda: MIGRATIONS, checked_table="collections"
)
