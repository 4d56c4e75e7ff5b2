"""Chat history from other apps into the window: *File › Import Chats…* (files or zips) and
*Import Chats from Folder…*, a chat export dropped on the window, the import dialog they open,
and *Edit › Undo Import* for every import made since the app started.

A drop is sorted off the GUI thread: folders, zips and JSON files holding a known app's
conversations open the import; any other file is attached to the draft as before. After an
import or its undo the sidebar lists the conversations again and the open chat is shown anew.

Branchwise's own per-chat JSON keeps *Import Conversation…* (it opens the one conversation at
once); the same files also import here, found again by their source on a second import.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from app.store.conversations import StoreError
from ui.chat.composer import local_files
from ui.dialogs.import_chats import ImportChatsDialog
from ui.dialogs.import_report import report_sentence
from ui.dialogs.import_task import EXPORT_SUFFIXES, DropSorter, ImportTask
from ui.window.window_host import ConversationList

if TYPE_CHECKING:
    from ui.window.actions import WindowActions
    from ui.window.composer_extras import ComposerExtras
    from ui.window.sidebar_commands import SidebarCommands

_FILE_FILTER = "Chat exports (*.json *.jsonl *.zip);;All files (*)"


class ImportHost(ConversationList, Protocol):
    """The window as the history import uses it."""

    menu_actions: WindowActions
    sidebar_commands: SidebarCommands
    composer_extras: ComposerExtras


class HistoryImport(QObject):
    undoFinished = Signal(int)  # the batch taken out (or that could not be)

    def __init__(self, window: ImportHost) -> None:
        super().__init__(window)
        self._window = window
        self.dialog: ImportChatsDialog | None = None
        self.batches: list[int] = []  # this session's imports, newest last: Edit › Undo Import
        self._undoing: ImportTask | None = None
        self._sorter = DropSorter(self)
        self._sorter.sorted.connect(self._on_sorted, Qt.ConnectionType.QueuedConnection)

    # -- asking for files -------------------------------------------------------------------

    @Slot()
    def ask_files(self) -> None:
        chosen, _ = QFileDialog.getOpenFileNames(
            self._window, "Import Chats", str(Path.home()), _FILE_FILTER
        )
        if chosen:
            self.open_preview([Path(p) for p in chosen])

    @Slot()
    def ask_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self._window, "Import Chats from a Folder", str(Path.home())
        )
        if chosen:
            self.open_preview([Path(chosen)])

    def open_preview(self, paths: list[Path]) -> ImportChatsDialog:
        """The import dialog on `paths`, reading them (nothing is written until Import)."""
        dialog = ImportChatsDialog(paths, self._window.store.path, self._window)
        dialog.imported.connect(self._on_imported)
        dialog.undoRequested.connect(self.undo)
        dialog.finished.connect(lambda *_: self._forget(dialog))
        self.dialog = dialog
        dialog.show()
        return dialog

    def _forget(self, dialog: ImportChatsDialog) -> None:
        """A closed dialog goes (with its lists; a running preview stops reporting)."""
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    # -- drops ------------------------------------------------------------------------------

    def drop(self, event: QDropEvent) -> None:
        """Files dropped on the window: chat exports are imported, the rest attached."""
        files = local_files(event.mimeData())
        if not files:
            return
        event.acceptProposedAction()
        maybe = [f for f in files if _maybe_export(Path(f))]
        attach = [f for f in files if f not in maybe]
        if attach:
            self._window.composer_extras.attach(attach)
        if maybe:
            self._sorter.sort(maybe)

    @Slot(list, list)
    def _on_sorted(self, exports: list[str], others: list[str]) -> None:
        if others:
            self._window.composer_extras.attach(others)
        if exports:
            self.open_preview([Path(p) for p in exports])

    # -- after an import, and undo ----------------------------------------------------------

    @Slot(object)
    def _on_imported(self, report: dict[str, Any]) -> None:
        if report["batch_id"] is not None:
            self.batches.append(report["batch_id"])
        self.update_undo_action()
        self._show_store_again()
        window = self._window
        new = [o["conversation_id"] for item in report["inputs"] for o in item["outcomes"]
               if o["status"] == "imported" and o["conversation_id"] is not None]
        cid = window.current_conversation_id
        if new and (cid is None or window.is_empty(cid)):
            window.open_conversation(new[0])  # rather than the empty chat the app opened with
        window.statusBar().showMessage(report_sentence(report), 5000)

    @Slot()
    def undo_last(self) -> None:
        if self.batches:
            self.undo(self.batches[-1])

    @Slot(int)
    def undo(self, batch_id: int) -> None:
        """Take import `batch_id` back out, on a thread of its own."""
        if self._undoing is not None and self._undoing.running:
            return
        task = ImportTask(self._window.store.path, self)
        task.undone.connect(lambda result: self._on_undone(batch_id, result),
                            Qt.ConnectionType.QueuedConnection)
        task.failed.connect(lambda message: self._on_undo_failed(batch_id, message),
                            Qt.ConnectionType.QueuedConnection)
        self._undoing = task
        self._window.menu_actions.undo_import.setEnabled(False)
        task.undo(batch_id)

    def _on_undone(self, batch_id: int, result: dict[str, Any]) -> None:
        if batch_id in self.batches:
            self.batches.remove(batch_id)
        self.update_undo_action()
        self._show_store_again()
        for dialog in self._window.findChildren(ImportChatsDialog):
            if dialog.batch_id == batch_id:
                dialog.show_undone(result)
        self._window.statusBar().showMessage(
            f"Import undone: {result['removed_conversations']:,} conversations taken out.", 5000
        )
        self.undoFinished.emit(batch_id)

    def _on_undo_failed(self, batch_id: int, message: str) -> None:
        self.update_undo_action()
        self._window.show_notice(f"The import could not be undone: {message}")
        self.undoFinished.emit(batch_id)

    def update_undo_action(self) -> None:
        """Edit › Undo Import: on while this session has an import to take out."""
        action = self._window.menu_actions.undo_import
        action.setEnabled(bool(self.batches))
        action.setText(f"Undo &Import ({len(self.batches)})" if len(self.batches) > 1
                       else "Undo &Import")

    def _show_store_again(self) -> None:
        """List the conversations again; the open one is shown anew, or, gone with an undone
        import, replaced by the newest one left."""
        window = self._window
        window.sidebar_commands.refresh()
        cid = window.current_conversation_id
        if cid is None:
            return
        try:
            window.store.get_conversation(cid)
        except StoreError:
            window.close_conversation()
            remaining = window.store.list_conversations()
            if remaining:
                window.open_conversation(remaining[0].id)
            else:
                window.new_chat()
            return
        window.open_conversation(cid)


def _maybe_export(path: Path) -> bool:
    """Worth reading to find out (a folder, a zip, a JSON file); others are attachments."""
    return path.is_dir() or path.suffix.lower() in (*EXPORT_SUFFIXES, ".zip")
