"""Export a conversation to a file (JSON keeps every branch, Markdown the branch on screen) and
import one exported as JSON: the File menu's commands, the file dialogs that ask where, and what
the person is told when a file cannot be written or read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QFileDialog, QWidget

from app.library.entries import list_models
from app.store.conversations import StoreError
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from app.paths import AppPaths
    from app.settings import Preferences
    from app.store.conversations import Conversation, Store

MARKDOWN_SUFFIXES = (".md", ".markdown")
_EXPORT_FILTERS = "JSON, every branch (*.json);;Markdown, this branch (*.md)"


class FilesHost(ChatPane, Protocol):
    """The window as export and import use it."""

    preferences: Preferences
    paths: AppPaths


def write_export(
    store: Store, conversation_id: int, path: Path, model_names: dict[str, str] | None = None
) -> None:
    """Raises StoreError or OSError. `model_names` (model id to readable name) heads each reply
    of a Markdown export."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        text = store.export_markdown(conversation_id, model_names)
    else:
        text = json.dumps(store.export_json(conversation_id), indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")


def read_import(controller: ChatController, path: Path) -> Conversation:
    """Raises OSError, UnicodeDecodeError, json.JSONDecodeError or StoreError; nothing is
    added unless the whole file is valid."""
    return controller.import_conversation(json.loads(path.read_text(encoding="utf-8")))


def ask_export_path(parent: QWidget, title: str, folder: Path) -> Path | None:
    """Ask where to export, starting in `folder` with a file name made from `title`."""
    safe = "".join(c if c.isalnum() or c in " -_" else "_" for c in title).strip() or "chat"
    chosen, file_filter = QFileDialog.getSaveFileName(
        parent, "Export Conversation", str(folder / f"{safe}.json"), _EXPORT_FILTERS
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


class ConversationFiles(QObject):
    def __init__(self, window: FilesHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._store = window.store

    def export_to(self, path: Path) -> bool:
        """The open conversation; JSON keeps every branch, Markdown (.md) the branch on screen."""
        cid = self._window.current_conversation_id
        if cid is None:
            return False
        names = {info.id: info.name for info in list_models(self._window.paths.models_dir)}
        try:
            write_export(self._store, cid, path, names)
        except (StoreError, OSError) as exc:
            self._window.show_notice(f"The conversation could not be exported: {exc}")
            return False
        self._window.statusBar().showMessage(f"Exported to {path}", 5000)
        return True

    def import_from(self, path: Path) -> int | None:
        """The new conversation's id, open; None (and the person told why) if nothing was
        imported."""
        try:
            conversation = read_import(self._window.controller, path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, StoreError) as exc:
            self._window.show_notice(f"{path.name} could not be imported: {exc}")
            return None
        self._window.open_conversation(conversation.id)
        return conversation.id

    @Slot()
    def ask_export(self) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:
            preferences = self._window.preferences
            title = self._store.get_conversation(cid).title
            path = ask_export_path(self._window.window(), title, preferences.export_folder)
            if path is not None and self.export_to(path):
                preferences.export_folder = path.parent  # the next export starts there

    @Slot()
    def ask_import(self) -> None:
        path = ask_import_path(self._window.window())
        if path is not None:
            self.import_from(path)
