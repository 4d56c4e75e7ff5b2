"""A chat's settings dialog: every field shows whole with its hint, scrolling where the screen is
too short for the form, and one chat sets how much of a message its knowledge excerpts take."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFormLayout

from app.store.conversations import Store
from ui.dialogs.conversation_settings import ConversationSettingsDialog
from ui.forms.knowledge_budget import QUARTER
from ui.forms.sampling_fields import HintedField


def test_every_field_and_hint_shows_whole_on_a_screen_too_short_for_the_form(
    qtbot, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "chat.sqlite3") as store:
        dialog = ConversationSettingsDialog(store.create_conversation(model_id=None), [], None)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        screen = dialog.screen().availableGeometry()
        assert dialog.height() <= screen.height()
        form = dialog.findChild(QFormLayout)
        assert form is not None
        rows = [
            item.widget()
            for row in range(form.rowCount())
            if (item := form.itemAt(row, QFormLayout.ItemRole.FieldRole)) is not None
        ]
        hinted = [row for row in rows if isinstance(row, HintedField)]
        assert len(hinted) >= 14
        for row in hinted:  # a squeezed row draws its hint over the row below
            assert row.height() >= row.heightForWidth(row.width()), row.hint.text()


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
