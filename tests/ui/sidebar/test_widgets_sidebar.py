"""The sidebar: order, pin, rename, delete with confirmation, search, New chat."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ui.sidebar.list_models import IdRole, PinnedRole
from ui.sidebar.sidebar import Sidebar
from ui.widgets.view_models import ConversationRow, SearchHit

NOW = datetime(2026, 11, 30, 12, 0)
ROWS = [
    ConversationRow("old", "Old chat", updated_at=NOW - timedelta(days=3)),
    ConversationRow("new", "Newest chat", updated_at=NOW),
    ConversationRow("pin", "Pinned notes", pinned=True, updated_at=NOW - timedelta(days=9)),
    ConversationRow("mid", "Middle chat", updated_at=NOW - timedelta(hours=5)),
]


@pytest.fixture
def sidebar(qtbot: QtBot) -> Sidebar:
    widget = Sidebar()
    qtbot.addWidget(widget)
    widget.resize(300, 500)
    widget.set_conversations(ROWS)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _ids(sidebar: Sidebar) -> list[str]:
    model = sidebar.model
    return [model.index(row).data(IdRole) for row in range(model.rowCount())]


def _index_of(sidebar: Sidebar, conversation_id: str) -> QModelIndex:
    return sidebar.model.index(sidebar.model.row_of(conversation_id))


def _click_row(qtbot: QtBot, sidebar: Sidebar, conversation_id: str) -> None:
    rect = sidebar.list.visualRect(_index_of(sidebar, conversation_id))
    qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _answer_next_dialog(qtbot: QtBot, button_text: str) -> None:
    """Click a button of the modal dialog that is about to open."""

    def answer() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox), "a confirmation was shown"
        button = next(b for b in box.buttons() if b.text() == button_text)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, answer)


def test_pinned_first_then_newest_first(sidebar: Sidebar) -> None:
    assert _ids(sidebar) == ["pin", "new", "mid", "old"]
    assert _index_of(sidebar, "pin").data(PinnedRole) is True
    assert _index_of(sidebar, "new").data(PinnedRole) is False
    assert "pinned" in _index_of(sidebar, "pin").data(Qt.ItemDataRole.AccessibleTextRole)


def test_the_list_model_is_a_well_behaved_qt_model(
    sidebar: Sidebar, qtmodeltester: ModelTester
) -> None:
    qtmodeltester.check(sidebar.model)


def test_clicking_a_conversation_opens_it_but_selecting_in_code_does_not(
    qtbot: QtBot, sidebar: Sidebar
) -> None:
    opened: list[str] = []
    sidebar.conversationActivated.connect(opened.append)

    sidebar.set_current("mid")
    _click_row(qtbot, sidebar, "old")

    assert opened == ["old"]
    assert sidebar.current_id() == "old"


def test_refreshing_the_list_keeps_the_selection(sidebar: Sidebar) -> None:
    sidebar.set_current("mid")
    sidebar.set_conversations([*ROWS, ConversationRow("brand", "Brand new", updated_at=NOW)])

    assert sidebar.current_id() == "mid"


def test_f2_renames_inline(qtbot: QtBot, sidebar: Sidebar) -> None:
    sidebar.set_current("mid")
    sidebar.activateWindow()
    sidebar.list.setFocus()
    qtbot.waitUntil(sidebar.list.hasFocus)
    qtbot.keyClick(sidebar.list, Qt.Key.Key_F2)
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Middle chat"

    editor.selectAll()
    qtbot.keyClicks(editor, "Trip plans")
    with qtbot.waitSignal(sidebar.renameRequested) as renamed:
        qtbot.keyClick(editor, Qt.Key.Key_Return)

    assert renamed.args == ["mid", "Trip plans"]
    assert _index_of(sidebar, "mid").data() == "Trip plans"


def test_a_list_refresh_while_renaming_keeps_the_typed_title(
    qtbot: QtBot, sidebar: Sidebar
) -> None:
    # A reply that finishes refreshes the list; the title being typed must survive it.
    sidebar.rename("mid")
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None
    editor.selectAll()
    qtbot.keyClicks(editor, "Trip plans")

    sidebar.set_conversations([*ROWS, ConversationRow("brand", "Brand new", updated_at=NOW)])

    assert sidebar.list.findChild(QLineEdit) is editor and editor.text() == "Trip plans"
    with qtbot.waitSignal(sidebar.renameRequested) as renamed:
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert renamed.args == ["mid", "Trip plans"]
    qtbot.waitUntil(lambda: "brand" in _ids(sidebar))
    assert sidebar.current_id() == "mid"


def test_an_empty_title_is_refused(qtbot: QtBot, sidebar: Sidebar) -> None:
    renames: list[tuple[str, str]] = []
    sidebar.renameRequested.connect(lambda cid, title: renames.append((cid, title)))

    assert not sidebar.model.setData(_index_of(sidebar, "old"), "   ")

    assert renames == []
    assert _index_of(sidebar, "old").data() == "Old chat"


def test_delete_asks_first_and_only_deletes_when_confirmed(qtbot: QtBot, sidebar: Sidebar) -> None:
    deleted: list[str] = []
    sidebar.deleteRequested.connect(deleted.append)
    sidebar.set_current("old")

    for answer in ("Cancel", "Delete"):
        sidebar.activateWindow()
        sidebar.list.setFocus()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is sidebar.list)
        _answer_next_dialog(qtbot, answer)
        qtbot.keyClick(sidebar.list, Qt.Key.Key_Delete)
        assert deleted == ([] if answer == "Cancel" else ["old"])


def test_the_context_menu_pins_and_unpins(sidebar: Sidebar) -> None:
    pins: list[tuple[str, bool]] = []
    sidebar.pinRequested.connect(lambda cid, pinned: pins.append((cid, pinned)))

    for conversation_id in ("new", "pin"):
        menu = sidebar.context_menu(conversation_id)
        action = next(a for a in menu.actions() if a.text() in ("Pin to top", "Unpin"))
        action.trigger()

    assert pins == [("new", True), ("pin", False)]


def test_search_is_debounced_and_hits_open_the_message(qtbot: QtBot, sidebar: Sidebar) -> None:
    queries: list[str] = []
    sidebar.searchRequested.connect(queries.append)

    with qtbot.waitSignal(sidebar.searchRequested):
        qtbot.keyClicks(sidebar.search_box, "cache")
    assert queries == ["cache"], "one search for the whole word, not one per key"

    sidebar.set_search_results(
        [
            SearchHit("mid", "m42", "Middle chat", "…the KV cache keeps…"),
            SearchHit("old", "m7", "Old chat", "…no cache here…"),
        ]
    )
    assert sidebar.results.isVisible()
    assert not sidebar.list.isVisible()
    second = sidebar.results.model().index(1, 0)
    with qtbot.waitSignal(sidebar.searchHitActivated) as hit:
        rect = sidebar.results.visualRect(second)
        qtbot.mouseClick(sidebar.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert hit.args == ["old", "m7"]

    sidebar.search_box.clear()
    assert sidebar.list.isVisible()


def test_a_search_without_hits_says_so(qtbot: QtBot, sidebar: Sidebar) -> None:
    with qtbot.waitSignal(sidebar.searchRequested):
        qtbot.keyClicks(sidebar.search_box, "zebra")
    sidebar.set_search_results([])

    only = sidebar.results.model().index(0, 0)
    assert only.data() == "No chats mention “zebra”"
    assert not only.flags() & Qt.ItemFlag.ItemIsEnabled


def test_new_chat_button(qtbot: QtBot, sidebar: Sidebar) -> None:
    with qtbot.waitSignal(sidebar.newRequested):
        qtbot.mouseClick(sidebar.new_button, Qt.MouseButton.LeftButton)


def test_every_control_has_an_accessible_name_and_tooltip(sidebar: Sidebar) -> None:
    for control in (sidebar.new_button, sidebar.search_box, sidebar.list, sidebar.results):
        assert control.accessibleName()
        assert control.toolTip()
