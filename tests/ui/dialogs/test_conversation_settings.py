"""A chat's settings dialog: every field shows whole with its hint (the form scrolls where the
screen is too short for it), and one chat sets how much of a message its knowledge excerpts
take."""

from __future__ import annotations

from pathlib import Path

from app.store.conversations import Store
from tests.ui.squeezed import squeezed_rows
from ui.dialogs.conversation_settings import ConversationSettingsDialog
from ui.forms.knowledge_budget import QUARTER
from ui.forms.sampling_fields import HintedField


def test_every_field_and_hint_shows_whole_at_the_size_the_dialog_opens_at(
    qtbot, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "chat.sqlite3") as store:
        dialog = ConversationSettingsDialog(store.create_conversation(model_id=None), [], None)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        screen = dialog.screen().availableGeometry()
        assert dialog.height() <= screen.height()
        assert len(dialog.findChildren(HintedField)) >= 14
        assert squeezed_rows(dialog) == []


def test_one_chat_sets_how_much_knowledge_a_message_takes(qtbot, tmp_path: Path) -> None:
    with Store.open(tmp_path / "chat.sqlite3") as store:
        chat = store.create_conversation(
            model_id=None, params={"knowledge": ["Papers"], "knowledge_budget": 1024}
        )
        dialog = ConversationSettingsDialog(chat, [], None, defaults={"knowledge_budget": 2048})
        qtbot.addWidget(dialog)
        assert dialog.knowledge_budget.value() == 1024  # the chat's own, not the default
        dialog.knowledge_budget.setValue(512)
        params = dialog.settings().params
        assert params["knowledge_budget"] == 512 and params["knowledge"] == ["Papers"]
        dialog.restore_defaults()
        assert dialog.knowledge_budget.value() == 2048
        dialog.knowledge_budget.setValue(0)  # a quarter of the context: no value kept
        assert dialog.knowledge_budget.text() == QUARTER
        assert "knowledge_budget" not in dialog.settings().params
