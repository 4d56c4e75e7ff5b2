"""Preferences › New chats: the knowledge collections a new chat reads (one removed from the
index since stays listed and chosen, marked, so the choice is not dropped unseen) and how much
of a message its excerpts may take, written back to the preferences."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.settings import Preferences
from ui.dialogs.new_chat_defaults import QUARTER, ChatDefaults, NewChatDefaultsPage


def test_the_knowledge_new_chats_read_is_chosen_and_kept(qtbot, tmp_path: Path) -> None:
    page = NewChatDefaultsPage(
        ChatDefaults(None, "", {}, ("Old notes",), 0), [], ["Manuals", "Papers"]
    )
    qtbot.addWidget(page)
    items = [page.knowledge.item(i) for i in range(page.knowledge.count())]
    assert [i.text() for i in items] == ["Manuals", "Papers", "Old notes (removed)"]
    assert [i.checkState() == Qt.CheckState.Checked for i in items] == [False, False, True]
    assert page.knowledge_budget.text() == QUARTER  # 0: a quarter of the chat's context
    items[1].setCheckState(Qt.CheckState.Checked)
    page.knowledge_budget.setValue(1536)
    chosen = page.defaults()
    assert (chosen.knowledge, chosen.knowledge_budget) == (("Papers", "Old notes"), 1536)
    preferences = Preferences(tmp_path / "settings.ini")
    chosen.save_to(preferences)
    assert preferences.default_knowledge == ["Papers", "Old notes"]
    assert ChatDefaults.of(preferences) == chosen
