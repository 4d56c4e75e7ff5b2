"""A conversation out of the store and back in: `export_json` (the whole tree, its images' bytes,
its project and preset), `export_markdown` (the branch on screen, for reading) and `import_json`
(a new conversation from an export; its project and preset found again by uid, or restored).
The formats are `app.store.export`'s; this layer of `Store` reads and writes the rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.store import export as store_export
from app.store.compaction import CompactedBranches, write_compaction
from app.store.export_images import image_records, images_json, keep_images
from app.store.export_settings import chat_settings_json, restore_chat_settings
from app.store.projects import ProjectRows
from app.store.records import Conversation, dump_mapping


class ExchangedConversations(ProjectRows, CompactedBranches):
    """The export and import operations of `Store`."""

    def export_json(self, conversation_id: int) -> dict[str, Any]:
        conversation = self.get_conversation(conversation_id)
        visits = dict(
            self._all(
                "SELECT id, visit FROM messages WHERE conversation_id = ?", (conversation_id,)
            )
        )
        messages = self.all_messages(conversation_id)
        record = store_export.to_json(conversation, messages, visits)
        named = image_records(m.attachments for m in messages)
        record["images"] = images_json(named, self.images)  # bytes in the file, never in SQLite
        return record | chat_settings_json(self, conversation.project_id, conversation.preset_id)

    def export_markdown(
        self, conversation_id: int, model_names: Mapping[str, str] | None = None
    ) -> str:
        """The branch on screen as Markdown; `model_names` maps model ids to readable names."""
        return store_export.to_markdown(
            self.get_conversation(conversation_id), self.active_path(conversation_id), model_names
        )

    def import_json(self, data: object) -> Conversation:
        """A new conversation from `export_json` output (new ids), its images kept in the image
        store; nothing is written to the database unless all of it is valid."""
        record = store_export.from_json(data)
        project_id, preset_id = restore_chat_settings(self, data)  # found again by uid
        named = image_records(m.attachments for m in record.messages)
        keep_images(self.images, record.images, named)
        with self._write() as db:
            (new_id,) = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, system_prompt,"
                " model_id, params, pinned, archived, visit_clock, project_id, preset_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    record.title,
                    record.created_at,
                    record.updated_at,
                    record.system_prompt,
                    record.model_id,
                    dump_mapping(record.params, "conversation.params"),
                    record.pinned,
                    record.archived,
                    max((m.visit for m in record.messages), default=0),
                    project_id,
                    preset_id,
                ),
            ).fetchone()
            new_ids: dict[int, int] = {}
            for m in record.messages:
                parent = None if m.parent_id is None else new_ids[m.parent_id]
                new_ids[m.id] = self._insert_copy(db, new_id, parent, m, m.status, m.visit)
            # A summary names messages that are not its parents: mapped once all are in.
            compacted = [(new_ids[m.id], m.compaction) for m in record.messages if m.compaction]
            write_compaction(db, compacted, new_ids)
            # The file's active leaf, or the leaf last visited below it (a hand-edited file may
            # name an inner message); the visit counts come from the file as they are.
            leaf_id = (
                self.latest_leaf_in(db, new_id)
                if record.active_leaf_id is None
                else self._latest_leaf_under(db, new_ids[record.active_leaf_id])
            )
            db.execute(
                "UPDATE conversations SET active_leaf_id = ? WHERE id = ?", (leaf_id, new_id)
            )
        return self.get_conversation(new_id)
