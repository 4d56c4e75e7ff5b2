"""Preferences › New chats: the knowledge collections a new chat reads (one removed from the
index since stays listed and chosen, marked, so the choice is not dropped unseen) and how much
of a message its excerpts may take, kept with new chats' other defaults; a new chat reads them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.chat.new_chat import ChatModels, new_chat
from app.library.entries import ModelDefaults
from app.settings import Preferences
from app.store.conversations import Store
from ui.dialogs.new_chat_defaults import ChatDefaults, NewChatDefaultsPage
from ui.forms.knowledge_budget import QUARTER


def test_the_knowledge_new_chats_read_is_chosen_and_kept(qtbot, tmp_path: Path) -> None:
    before = ChatDefaults(None, "", {"temperature": 0.2, "knowledge": ["Old notes"]})
    page = NewChatDefaultsPage(before, [], collections=["Manuals", "Papers"])
    qtbot.addWidget(page)
    items = [page.knowledge.collections.item(i) for i in range(page.knowledge.collections.count())]
    assert [i.text() for i in items] == ["Manuals", "Papers", "Old notes (removed)"]
    assert [i.checkState() == Qt.CheckState.Checked for i in items] == [False, False, True]
    assert page.knowledge.budget.text() == QUARTER  # 0: a quarter of the chat's context
    items[1].setCheckState(Qt.CheckState.Checked)
    page.knowledge.budget.setValue(1536)
    chosen = page.defaults()
    assert chosen.params == {
        "temperature": 0.2,
        "knowledge": ["Papers", "Old notes"],
        "knowledge_budget": 1536,
    }
    preferences = Preferences(tmp_path / "settings.ini")
    chosen.save_to(preferences)
    with Store.open(tmp_path / "chat.sqlite3") as store:
        models = ChatModels(lambda: None, lambda _id: True, lambda _id: ModelDefaults())
        made = new_chat(store, preferences, None, models)
    assert made.params["knowledge"] == ["Papers", "Old notes"]
    assert made.params["knowledge_budget"] == 1536 and made.params["temperature"] == 0.2
