"""Chat history from other apps into the window: *File › Import Chats…* (files or zips) and
*Import Chats from Folder…*, a chat export dropped on the window, the import dialog they open,
and *Edit › Undo Import* for every import made since the app started.

A drop is sorted off the GUI thread: folders, zips and JSON files holding a known app's
conversations open the import; any other file is attached to the draft as before. The work runs
as operations (`app.operations.chat_history`); what an import or its undo changed is announced
to the views, so the sidebar lists the conversations again and the open chat is shown anew
without this module telling them.

Branchwise's own per-chat JSON keeps *Import Conversation…* (it opens the one conversation at
once); the same files also import here, found again by their source on a second import.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from app.importers import run, writer
from app.importers.detect import EXPORT_SUFFIXES
from app.operations.chat_history import DroppedFiles, sort_dropped, undo_import
from app.operations.operation import Failure, Operation
from ui.chat.composer import local_files
from ui.dialogs.import_chats import ImportChatsDialog
from ui.dialogs.import_report import report_sentence
from ui.window.window_host import ConversationList

if TYPE_CHECKING:
    from ui.window.actions import WindowActions
    from ui.window.composer_extras import ComposerExtras

_FILE_FILTER = "Chat exports (*.json *.jsonl *.zip);;All files (*)"


class ImportHost(ConversationList, Protocol):
    """The window as the history import uses it."""

    menu_actions: WindowActions
    composer_extras: ComposerExtras


class HistoryImport(QObject):
    undoFinished = Signal(int)  # the batch taken out (or that could not be)

    def __init__(self, window: ImportHost) -> None:
        super().__init__(window.window())
        self._window = window
        self.dialog: ImportChatsDialog | None = None
        self.batches: list[int] = []  # this session's imports, newest last: Edit › Undo Import
        self._undoing: Operation[writer.UndoResult, None] | None = None

    # -- asking for files -------------------------------------------------------------------

    @Slot()
    def ask_files(self) -> None:
        chosen, _ = QFileDialog.getOpenFileNames(
            self._window.window(), "Import Chats", str(Path.home()), _FILE_FILTER
        )
        if chosen:
            self.open_preview([Path(p) for p in chosen])

    @Slot()
    def ask_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self._window.window(), "Import Chats from a Folder", str(Path.home())
        )
        if chosen:
            self.open_preview([Path(chosen)])

    def open_preview(self, paths: list[Path]) -> ImportChatsDialog:
        """The import dialog on `paths`, reading them (nothing is written until Import)."""
        dialog = ImportChatsDialog(paths, self._window.store.path, self._window.window())
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
            sort_dropped(self, maybe).on_success(self._on_sorted).on_failure(
                self._on_sort_failed
            ).start()

    def _on_sorted(self, dropped: DroppedFiles) -> None:
        if dropped.attachments:
            self._window.composer_extras.attach(list(dropped.attachments))
        if dropped.exports:
            self.open_preview(list(dropped.exports))

    def _on_sort_failed(self, failure: Failure) -> None:
        self._window.show_notice(f"The dropped files could not be sorted: {failure.message}")

    # -- after an import, and undo ----------------------------------------------------------

    @Slot(object)
    def _on_imported(self, report: run.ImportReport) -> None:
        if report.batch_id is not None:
            self.batches.append(report.batch_id)
        self.update_undo_action()
        window = self._window
        new = [
            o.conversation_id
            for o in report.outcomes
            if o.status is writer.ImportStatus.IMPORTED and o.conversation_id is not None
        ]
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
        """Take import `batch_id` back out, off the GUI thread."""
        if self._undoing is not None and self._undoing.running:
            return
        self._window.menu_actions.undo_import.setEnabled(False)
        self._undoing = (
            undo_import(self, self._window.store.path, batch_id)
            .on_success(lambda result: self._on_undone(batch_id, result))
            .on_failure(lambda failure: self._on_undo_failed(batch_id, failure))
            .start()
        )

    def _on_undone(self, batch_id: int, result: writer.UndoResult) -> None:
        if batch_id in self.batches:
            self.batches.remove(batch_id)
        self.update_undo_action()
        for dialog in self._window.window().findChildren(ImportChatsDialog):
            if dialog.batch_id == batch_id:
                dialog.show_undone(result)
        self._window.statusBar().showMessage(
            f"Import undone: {result.removed_conversations:,} conversations taken out.", 5000
        )
        self.undoFinished.emit(batch_id)

    def _on_undo_failed(self, batch_id: int, failure: Failure) -> None:
        self.update_undo_action()
        self._window.show_notice(f"The import could not be undone: {failure.message}")
        self.undoFinished.emit(batch_id)

    def update_undo_action(self) -> None:
        """Edit › Undo Import: on while this session has an import to take out."""
        action = self._window.menu_actions.undo_import
        action.setEnabled(bool(self.batches))
        action.setText(
            f"Undo &Import ({len(self.batches)})" if len(self.batches) > 1 else "Undo &Import"
        )


def _maybe_export(path: Path) -> bool:
    """Worth reading to find out (a folder, a zip, a JSON file); others are attachments."""
    return path.is_dir() or path.suffix.lower() in (*EXPORT_SUFFIXES, ".zip")
