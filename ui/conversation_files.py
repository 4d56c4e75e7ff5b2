"""Export a conversation to a file (JSON keeps every branch, Markdown the branch on screen) and
import one exported as JSON, with the file dialogs that ask where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QWidget

if TYPE_CHECKING:
    from app.controller import ChatController
    from app.store import Conversation, Store

MARKDOWN_SUFFIXES = (".md", ".markdown")
_EXPORT_FILTERS = "JSON, every branch (*.json);;Markdown, this branch (*.md)"


def write_export(store: Store, conversation_id: int, path: Path) -> None:
    """Raises StoreError or OSError."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        text = store.export_markdown(conversation_id)
    else:
        text = json.dumps(store.export_json(conversation_id), indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")


def read_import(controller: ChatController, path: Path) -> Conversation:
    """Raises OSError, UnicodeDecodeError, json.JSONDecodeError or StoreError; nothing is
    added unless the whole file is valid."""
    return controller.import_conversation(json.loads(path.read_text(encoding="utf-8")))


def ask_export_path(parent: QWidget, title: str) -> Path | None:
    safe = "".join(c if c.isalnum() or c in " -_" else "_" for c in title).strip() or "chat"
    chosen, file_filter = QFileDialog.getSaveFileName(
        parent, "Export Conversation", str(Path.home() / f"{safe}.json"), _EXPORT_FILTERS
    )
    if not chosen:
        return None
    path = Path(chosen)
    if not path.suffix:  # the format follows the filter the person picked
        path = path.with_suffix(".md" if file_filter.startswith("Markdown") else ".json")
    return path


def ask_import_path(parent: QWidget) -> Path | None:
    chosen, _ = QFileDialog.getOpenFileName(
        parent, "Import Conversation", str(Path.home()), "Branchwise JSON (*.json)"
    )
    return Path(chosen) if chosen else None
