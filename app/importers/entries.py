"""One conversation at a time out of a reader, each refused on its own: a reader's entries go
through `each`, which turns a refusal of one entry into a `RefusedEntry` and lets the rest go
on, and a file that breaks off into one last refusal for the remainder."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from app.importers.errors import ImportRefusedError
from app.importers.presets_projects import SettingsEntry
from app.importers.tree import ImportedConversation


@dataclass(frozen=True, slots=True)
class RefusedEntry:
    """An entry that cannot be a conversation (or a file part that could not be read)."""

    where: str
    reason: str
    source_id: str | None = None
    title: str | None = None


# A conversation, one that cannot be read, or the presets and projects an export holds.
Entry = ImportedConversation | RefusedEntry | SettingsEntry
IMPORTER_FAULT = "Branchwise could not read this entry; please report it"
_log = logging.getLogger(__name__)
Convert = Callable[[Any, str], ImportedConversation]


def each(items: Iterable[Any], where: str, convert: Convert) -> Iterator[Entry]:
    """`convert(item, where)` for each item; `where` names the item for the report."""
    count = 0
    iterator = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except ImportRefusedError as exc:
            after = f" after entry {count}" if count else ""
            yield RefusedEntry(f"{where}{after}", f"The rest of the file could not be read: {exc}")
            return
        count += 1
        yield one(item, f"{where}, entry {count}", convert)


def one(item: Any, where: str, convert: Convert) -> Entry:
    try:
        conversation = convert(item, where)
        conversation.where = conversation.where or where
        return conversation
    except Exception as exc:
        reason = str(exc)
        if not isinstance(exc, ImportRefusedError):
            # A fault of the importer, not of the file: the rest still imports; the log has it.
            _log.exception("Importing %s failed", where)
            reason = f"{IMPORTER_FAULT} ({type(exc).__name__}: {exc})"
        source_id = title = None
        if isinstance(item, dict):
            found = item.get("id", item.get("uuid", item.get("conversation_id")))
            source_id = found if isinstance(found, str) else None
            named = item.get("title", item.get("name"))
            title = named if isinstance(named, str) else None
        return RefusedEntry(where, reason, source_id, title)
