"""Preferences › New chats sets what a new chat starts with, and the chat's settings dialog takes a
context length that the chat then keeps and the token meter counts against."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from app.library.install import import_folder
from app.paths import AppPaths
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, wait_ready_model
from ui.dialogs.new_chat_defaults import LOADED_MODEL
from ui.forms.context_length_field import MODELS_MAXIMUM

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _library(data_dir: Path, tiny_models_dir: Path, *kinds: str) -> None:
    models = AppPaths.resolve(data_dir).models_dir
    models.mkdir(parents=True, exist_ok=True)
    for kind in kinds:
        import_folder(tiny_models_dir / kind, models, link=True)


def test_a_new_chat_starts_from_the_defaults_set_in_preferences(
    qtbot, tmp_path: Path, tiny_models_dir: Path
) -> None:
    _library(tmp_path, tiny_models_dir, "llama", "gemma3_text")
    with running_app(qtbot, tmp_path, tiny_models_dir / "llama") as app:
        window, store = app.window, app.store
        first = window.current_conversation_id
        store.append_message(first, None, "user", "An earlier chat")  # not reused as new

        dialog = window.open_preferences()
        page = dialog.new_chats_page
        dialog.tabs.setCurrentWidget(page)
        models = [page.model_box.itemText(i) for i in range(page.model_box.count())]
        assert models == [LOADED_MODEL, "gemma3_text", "llama"]
        page.model_box.setCurrentIndex(page.model_box.findData("gemma3_text"))
        page.system_prompt.setPlainText("Answer in French.")
        page.sampling.temperature.setValue(0.2)
        page.sampling.max_tokens.setValue(64)
        assert page.sampling.temperature.toolTip() == "0 always picks the likeliest token"
        dialog.accept()
        preferences = app.controller.preferences
        assert preferences.default_model_id == "gemma3_text"
        assert preferences.default_params == {"temperature": 0.2, "max_tokens": 64}

        window.new_chat()
        cid = window.current_conversation_id
        assert cid != first
        chat = store.get_conversation(cid)
        assert chat.model_id == "gemma3_text" and chat.system_prompt == "Answer in French."
        assert chat.params["temperature"] == 0.2 and chat.params["max_tokens"] == 64
        assert window.header.prompt_marker.isVisible()
        # The chat's model is loaded for it, as for any chat that names its model.
        qtbot.waitUntil(lambda: window.models.loaded_id() == "gemma3_text", timeout=60000)
        wait_ready_model(qtbot, app)

        # The chat's own settings start from those, and Restore Defaults goes back to them.
        settings = window.open_settings()
        assert settings.sampling.temperature.value() == 0.2
        settings.sampling.temperature.setValue(1.5)
        settings.sampling.top_k.setValue(7)
        restore = settings.findChild(QDialogButtonBox).button(
            QDialogButtonBox.StandardButton.RestoreDefaults
        )
        assert "Preferences" in restore.toolTip()
        restore.click()
        assert settings.sampling.temperature.value() == 0.2
        assert settings.sampling.top_k.value() == 0 and settings.sampling.max_tokens.value() == 64
        settings.reject()

        # Back to "the model loaded at the time".
        dialog = window.open_preferences()
        assert dialog.new_chats_page.model_box.currentData() == "gemma3_text"
        dialog.new_chats_page.model_box.setCurrentIndex(0)
        dialog.accept()
        assert preferences.default_model_id is None


def test_a_chats_context_length_is_stored_shown_and_counted_against(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        cid = window.current_conversation_id
        dialog = window.open_settings()
        field = dialog.context_length
        assert field.text() == MODELS_MAXIMUM and field.limit() is None
        assert "reads up to 4,096 tokens" in dialog._context_row.hint.text()

        field.setValue(100)
        dialog.accept()
        assert dialog.isVisible(), "a limit the engine cannot use is refused"
        assert "at least 256 tokens" in dialog.error.text() and dialog.error.isVisible()
        assert "context_length" not in app.store.get_conversation(cid).params

        field.setValue(512)
        dialog.accept()
        assert app.store.get_conversation(cid).params["context_length"] == 512
        again = window.open_settings()
        assert again.context_length.value() == 512 and again.context_length.text() == "512 tokens"
        again.reject()

        window.composer.edit.setPlainText("How long is a piece of string?")
        qtbot.waitUntil(
            lambda: window.composer.token_label.text().endswith("/ 512 tokens"), timeout=10000
        )

        # Back to the model's maximum: the key goes, and the meter counts the model's context.
        third = window.open_settings()
        third.context_length.setValue(0)
        third.accept()
        assert "context_length" not in app.store.get_conversation(cid).params
        window.composer.edit.setPlainText("And now?")
        qtbot.waitUntil(
            lambda: window.composer.token_label.text().endswith("/ 4,096 tokens"), timeout=10000
        )


def test_sampling_values_that_are_no_numbers_show_as_the_defaults(qtbot) -> None:
    from app.chat.controller import DEFAULT_PARAMS
    from ui.forms.sampling_fields import SamplingFields

    fields = SamplingFields()
    fields.set_values(
        {"temperature": "hot", "top_k": float("nan"), "max_tokens": None, "min_p": 0.25}
    )
    shown = fields.values()
    assert shown["temperature"] == DEFAULT_PARAMS["temperature"]
    assert shown["top_k"] == DEFAULT_PARAMS["top_k"]
    assert shown["max_tokens"] == DEFAULT_PARAMS["max_tokens"] and shown["min_p"] == 0.25
