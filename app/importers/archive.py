"""`branchwise export`: every conversation of the store in one file,
`{"format": "branchwise-archive", "version": 1, "presets": [...], "projects": [...],
"conversations": [<per-chat export>...]}`, written one conversation at a time, to a temporary
file renamed into place when whole. The presets and projects (`app.store.export_settings`) come
first, so an import restores them before the chats that name them (`"project_uid"`,
`"preset_uid"`). A conversation imported from another app carries its source (`"source"`, each
message's `"source_id"`), so a restore followed by a re-import of the original export adds
nothing."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from app.importers.branchwise import ARCHIVE, ARCHIVE_VERSION
from app.store.conversations import Store
from app.store.export_settings import preset_json, project_json


def write_archive(store: Store, out: Path) -> int:
    """Write the archive to `out`; returns how many conversations it holds. Raises OSError
    (the file could not be written) or StoreError."""
    conversations = store.list_conversations(include_archived=True)
    temporary = out.with_name(f".{out.name}.partial")
    try:
        with temporary.open("w", encoding="utf-8") as stream:
            head = {
                "format": ARCHIVE,
                "version": ARCHIVE_VERSION,
                "exported_at": time.time(),
                "presets": [preset_json(p) for p in store.list_presets()],
                "projects": [project_json(store, p) for p in store.list_projects()],
            }
            stream.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "conversations": [\n')
            for index, conversation in enumerate(conversations):
                record = _record(store, conversation.id)
                stream.write((",\n" if index else "") + json.dumps(record, ensure_ascii=False))
            stream.write("\n]}\n")
            stream.flush()
            os.fsync(stream.fileno())
        temporary.replace(out)
    finally:
        temporary.unlink(missing_ok=True)
    return len(conversations)


def _record(store: Store, conversation_id: int) -> dict[str, Any]:
    record = store.export_json(conversation_id)
    # The head holds the presets and projects whole: a chat names its own by uid.
    for key in ("project", "project_preset", "preset"):
        found = record.pop(key, None)
        if key != "project_preset" and found is not None:
            record[f"{key}_uid"] = found["uid"]
    with store.transaction() as db:
        source = db.execute(
            "SELECT source_format, source_id FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        message_sources = dict(
            db.execute(
                "SELECT id, source_id FROM messages WHERE conversation_id = ? AND source_id IS NOT"
                " NULL",
                (conversation_id,),
            ).fetchall()
        )
    if source is not None and source[1] is not None:
        record["source"] = {"format": source[0], "id": source[1]}
    for message in record["messages"]:
        if message["id"] in message_sources:
            message["source_id"] = message_sources[message["id"]]
    return record
