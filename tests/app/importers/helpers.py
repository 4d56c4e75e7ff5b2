"""Reading a test file the way an import does, and the tree of what was read, for asserting
message by message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.importers import detect
from app.importers.entries import Entry, RefusedEntry
from app.importers.sources import open_source
from app.importers.tree import ImportedConversation


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def read_entries(path: Path) -> tuple[list[str], list[Entry]]:
    """The formats found and every entry read from `path`."""
    with open_source(path) as source:
        found = detect.readers(source)
        return [kind for kind, _ in found], [entry for _, entries in found for entry in entries]


def conversations(path: Path) -> list[ImportedConversation]:
    return [e for e in read_entries(path)[1] if isinstance(e, ImportedConversation)]


def refusals(path: Path) -> list[RefusedEntry]:
    return [e for e in read_entries(path)[1] if isinstance(e, RefusedEntry)]


def shape(conversation: ImportedConversation) -> list[tuple[str, str | None, str, str]]:
    """(id, parent id, role, text) of each message, parents first, siblings in order."""
    return [(m.source_id, m.parent_id, m.role, m.content) for m in conversation.messages]


def by_id(conversation: ImportedConversation) -> dict[str, Any]:
    return {m.source_id: m for m in conversation.messages}
