"""The Knowledge page over the app's real index runs (a temporary index, the real operations
and watcher, a pause gate the test holds as a generating reply would): adding a folder and
seeing its progress, its figures and its failures with reasons (copyable); cancelling, which
keeps automatic runs away until Re-index; removing, which asks and leaves the files; a folder
that went away shown offline with its index kept; a duplicate name refused before anything
runs; and the page following changes made elsewhere, and indexing going on once it is closed.
Screenshots of a folder's figures and failures, light and dark (knowledge-page-*)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate
from app.operations.knowledge import add_folder
from app.operations.knowledge_activity import KnowledgeActivity
from app.operations.knowledge_folders import KnowledgeFolders
from app.settings import Preferences
from tests.app.knowledge.documents import HashEmbedder, encrypted_pdf_bytes, write
from tests.ui.screenshots.test_screenshots import _save, settle
from tests.ui.window_harness import OFFSCREEN_NOISE, click_in_next_message_box
from ui.knowledge.add_folder_dialog import name_problem
from ui.knowledge.embedding_choice import is_text_only
from ui.knowledge.folder_state import ShownState
from ui.knowledge.knowledge_page import KnowledgePage
from ui.widgets.theme import apply_theme, em

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

TIMEOUT_MS = 15_000
REPLY = 7  # the request id of the reply "generating" while the gate is held


class Knowledge:
    def __init__(self, qtbot: Any, tmp_path: Path) -> None:
        self.qtbot = qtbot
        self.tmp_path = tmp_path
        self.gate = PauseGate()
        self.preferences = Preferences(tmp_path / "data" / "settings.ini")
        # The vectors of a test model while the preference asks for any; none for text alone.
        embedder = HashEmbedder()
        self.folders = KnowledgeFolders(
            tmp_path / "data" / "knowledge.db",
            lambda: None if is_text_only(self.preferences.knowledge_embedder) else embedder,
            gate=self.gate,
        )
        self.activity = KnowledgeActivity(self.folders)
        self.page = KnowledgePage(self.activity, tmp_path / "models", self.preferences)
        qtbot.addWidget(self.page)
        self.page.show()

    def wait_state(self, name: str, state: ShownState) -> None:
        self.qtbot.waitUntil(lambda: self.page.state_of(name) is state, timeout=TIMEOUT_MS)

    def wait_shown(self, name: str, state: ShownState) -> None:
        """Wait until the page shows folder `name` selected, in `state`."""
        self.page.folder_list.select(name)
        self.wait_state(name, state)
        self.qtbot.waitUntil(lambda: self.page.detail.state is state, timeout=TIMEOUT_MS)

    def folder(self, name: str, files: int = 3) -> Path:
        root = self.tmp_path / name
        for n in range(files):
            write(root / "notes" / f"note-{n}.md", f"# Note {n}\n\nVolcanoes and lava, part {n}.")
        return root


@pytest.fixture
def knowledge(qtbot: Any, tmp_path: Path) -> Iterator[Knowledge]:
    made = Knowledge(qtbot, tmp_path)
    yield made
    made.folders.stop()
    made.gate.release(REPLY)


def test_a_folder_added_shows_its_progress_paused_by_a_reply_then_its_figures_and_failures(
    knowledge: Knowledge,
) -> None:
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]  # as the app runs
    root = knowledge.folder("Papers")
    write(root / "locked.pdf", encrypted_pdf_bytes(["Secret"], "hunter2"))
    write(root / "blob.txt", bytes(range(256)) * 8)
    page = knowledge.page
    assert page.empty.isVisible() and not page.folder_list.isVisible()
    knowledge.gate.hold(REPLY)  # a reply is generating
    page.add("Papers", root)

    knowledge.wait_shown("Papers", ShownState.PAUSED)
    detail = page.detail
    assert "Paused while a reply is generating · 0 of 5 files" in detail.state_label.text()
    assert detail.bar.isVisible() and detail.cancel_button.isEnabled()
    assert not detail.reindex_button.isEnabled()
    assert page.folder_list.item(0).text() == "Papers"
    knowledge.gate.release(REPLY)

    knowledge.wait_shown("Papers", ShownState.UP_TO_DATE)
    knowledge.qtbot.waitUntil(lambda: detail.files.text() == "3", timeout=TIMEOUT_MS)
    assert not detail.bar.isVisible() and detail.failures.text() == "2"
    assert detail.state_label.text().startswith("Up to date · indexed")
    reasons = {Path(row.path).name: row.reason for row in detail.failure_list.rows}
    assert set(reasons) == {"locked.pdf", "blob.txt"}
    assert "password" in reasons["locked.pdf"] and "binary" in reasons["blob.txt"]
    detail.failure_list.copy_all()
    copied = QGuiApplication.clipboard().text().splitlines()
    assert f"{root.resolve() / 'locked.pdf'}\t{reasons['locked.pdf']}" in copied
    assert detail.search.text() == "Text search and vectors of test-hash-64"
    tree = detail.failure_list.tree  # each name whole, with a gap before its reason
    widest = max(tree.fontMetrics().horizontalAdvance(name) for name in reasons)
    assert tree.columnWidth(0) >= widest + em(tree, 0.9)
    page.resize(900, 640)
    for theme in ("light", "dark"):  # its figures and failures, as File › Knowledge… shows them
        apply_theme(QApplication.instance(), theme)  # type: ignore[arg-type]
        settle()
        _save(page, f"knowledge-page-{theme}")
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]


def test_choosing_text_search_alone_indexes_every_folder_again_and_says_so(
    knowledge: Knowledge,
) -> None:
    page, folders = knowledge.page, knowledge.folders
    page.add("Papers", knowledge.folder("Papers", files=1))
    knowledge.wait_shown("Papers", ShownState.UP_TO_DATE)
    ended: list[object] = []
    folders.synced.connect(ended.append)
    combo = page.embedding.combo
    assert page.embedding.setting == "builtin", "the default the evaluation supports"
    combo.setCurrentIndex(combo.findData("none"))
    combo.activated.emit(combo.currentIndex())

    assert knowledge.preferences.knowledge_embedder == "none"
    knowledge.qtbot.waitUntil(lambda: len(ended) == 1, timeout=TIMEOUT_MS)
    assert page.detail.search.text() == "Text search (BM25)"


def test_cancel_stops_indexing_keeps_what_was_read_and_holds_off_rescans_until_re_index(
    knowledge: Knowledge,
) -> None:
    root = knowledge.folder("Archive", files=4)
    page, folders = knowledge.page, knowledge.folders
    knowledge.gate.hold(REPLY)
    page.add("Archive", root)
    knowledge.wait_shown("Archive", ShownState.PAUSED)
    page.detail.cancel_button.click()

    knowledge.wait_shown("Archive", ShownState.CANCELLED)
    assert "cancelled" in page.detail.state_label.text()
    assert page.detail.reindex_button.isEnabled() and not page.detail.cancel_button.isEnabled()
    knowledge.gate.release(REPLY)
    folders.sync("Archive")  # what the watcher and the rescan ask: the person said stop
    folders.sync_all()
    knowledge.qtbot.wait(300)
    assert folders.running is None and knowledge.page.state_of("Archive") is ShownState.CANCELLED
    with KnowledgeIndex.open(folders.database) as index:
        assert index.status("Archive").files == 0, "no file read since the cancel"

    page.detail.reindex_button.click()
    knowledge.wait_shown("Archive", ShownState.UP_TO_DATE)
    knowledge.qtbot.waitUntil(lambda: page.detail.files.text() == "4", timeout=TIMEOUT_MS)


def test_remove_asks_first_then_drops_the_index_and_never_the_files(
    knowledge: Knowledge,
) -> None:
    root = knowledge.folder("Manuals")
    page = knowledge.page
    page.add("Manuals", root)
    knowledge.wait_shown("Manuals", ShownState.UP_TO_DATE)
    asked: list[str] = []

    def read_question() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            asked.append(box.text())

    knowledge.qtbot.waitUntil(lambda: page.detail.remove_button.isEnabled())
    click_in_next_message_box("Cancel")
    page.detail.remove_button.click()
    assert page.state_of("Manuals") is ShownState.UP_TO_DATE, "cancelled: nothing removed"

    QTimer.singleShot(0, read_question)
    click_in_next_message_box("Remove Index")
    page.detail.remove_button.click()
    knowledge.qtbot.waitUntil(lambda: page.folder_list.count() == 0, timeout=TIMEOUT_MS)
    assert "Your files are not touched" in asked[0] and str(root) in asked[0]
    assert sorted(p.name for p in (root / "notes").iterdir()) == [
        "note-0.md",
        "note-1.md",
        "note-2.md",
    ]
    with KnowledgeIndex.open(knowledge.folders.database) as index:
        assert index.collections() == []
    assert page.empty.isVisible()


def test_a_folder_that_went_away_is_offline_with_its_index_kept(knowledge: Knowledge) -> None:
    root = knowledge.folder("Stick")
    page = knowledge.page
    page.add("Stick", root)
    knowledge.wait_shown("Stick", ShownState.UP_TO_DATE)
    root.rename(knowledge.tmp_path / "elsewhere")  # the disk is unplugged
    page.refresh()

    knowledge.wait_shown("Stick", ShownState.OFFLINE)
    detail = page.detail
    assert detail.offline_badge.isVisible() and not detail.reveal_button.isEnabled()
    assert "Its index is kept" in detail.state_label.text() and detail.files.text() == "3"
    knowledge.folders.sync("Stick")  # the rescan: it stays offline and keeps its files
    knowledge.qtbot.waitUntil(lambda: knowledge.folders.running is None, timeout=TIMEOUT_MS)
    page.refresh()
    knowledge.qtbot.waitSignal(page.shown, timeout=TIMEOUT_MS).wait()
    assert page.state_of("Stick") is ShownState.OFFLINE and detail.files.text() == "3"


def test_a_name_taken_is_refused_before_anything_is_indexed(knowledge: Knowledge) -> None:
    root = knowledge.folder("Papers", files=1)
    other = knowledge.folder("More", files=1)
    knowledge.page.add("Papers", root)
    knowledge.wait_shown("Papers", ShownState.UP_TO_DATE)

    dialog = knowledge.page.ask_name(other)
    assert dialog.name == "More" and dialog.add_button.isEnabled()
    dialog.name_edit.setText("  papers ")
    assert not dialog.add_button.isEnabled()
    assert "already a knowledge folder named “Papers”" in dialog.problem.text()
    dialog.name_edit.setText("")
    assert dialog.problem.text() == "A knowledge folder needs a name."
    dialog.reject()
    taken = {"Papers": str(root.resolve())}
    assert name_problem("Mine", root.resolve(), taken) == "This is already indexed as “Papers”."


def test_the_page_follows_changes_made_elsewhere_and_closing_it_stops_no_indexing(
    knowledge: Knowledge,
) -> None:
    page = knowledge.page
    # Added by another part of the app (an operation announces what it changed).
    elsewhere = knowledge.folder("Elsewhere", files=2)
    operation = add_folder(page, knowledge.folders.database, "Elsewhere", elsewhere)
    operation.start()
    knowledge.qtbot.waitUntil(lambda: page.folder_list.count() == 1, timeout=TIMEOUT_MS)
    knowledge.wait_state("Elsewhere", ShownState.UP_TO_DATE)

    knowledge.gate.hold(REPLY)
    page.add("Later", knowledge.folder("Later"))
    knowledge.wait_state("Later", ShownState.PAUSED)
    page.close()
    knowledge.gate.release(REPLY)
    knowledge.qtbot.waitUntil(lambda: knowledge.folders.running is None, timeout=TIMEOUT_MS)
    with KnowledgeIndex.open(knowledge.folders.database) as index:
        assert index.status("Later").files == 3, "the app's run went on with the page closed"
