"""Screenshots, light and dark, into tests/screenshots/: Preferences › New chats
(preferences-*) and its General tab (preferences-general-*), a chat's settings with its
context length (settings-*), and the model picker beside the composer (composer-picker-*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.library.entries import rename_model
from app.paths import AppPaths
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.squeezed import squeezed_rows
from tests.ui.window.test_window_new_chat_defaults import _library
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

# The tiny random models under readable names, as a library shows them.
NAMES = {"llama": "Tiny Llama (test model)", "gemma3_text": "Tiny Gemma 3 Instruct (test model)"}
EXCHANGE = (
    "What is the capital of Portugal?",
    "Lisbon. It has been the capital since the 13th century and sits where the Tagus meets "
    "the Atlantic.",
)


def test_screenshots_of_new_chat_defaults_the_context_length_and_the_model_picker(
    qtbot, tmp_path: Path, tiny_models_dir: Path
) -> None:
    _library(tmp_path, tiny_models_dir, *NAMES)
    models = AppPaths.resolve(tmp_path).models_dir
    for folder, name in NAMES.items():
        rename_model(models, folder, name)
    with running_app(qtbot, tmp_path, tiny_models_dir / "llama") as app:
        window, store, controller = app.window, app.store, app.controller
        window.resize(1000, 640)
        preferences = controller.preferences
        preferences.default_model_id = "gemma3_text"
        preferences.default_system_prompt = "You are a concise assistant. Answer in English."
        preferences.default_params = {"temperature": 0.3, "max_tokens": 2048}

        cid = window.current_conversation_id
        controller.rename_conversation(cid, "Capitals")
        question = store.append_message(cid, None, "user", EXCHANGE[0])
        store.append_message(cid, question.id, "assistant", EXCHANGE[1])
        controller.update_settings(
            cid, params={**store.get_conversation(cid).params, "context_length": 2048}
        )
        window.open_conversation(cid)
        window._render()
        qtbot.waitUntil(lambda: window.model_picker.current_model() == "llama", timeout=5000)

        for theme in ("light", "dark"):
            window.set_theme(theme)
            dialog = window.open_preferences()
            dialog.tabs.setCurrentWidget(dialog.new_chats_page)
            qtbot.wait(20)
            assert squeezed_rows(dialog) == []  # at the size it opens at: scrolled, not squeezed
            dialog.resize(
                max(dialog.width(), 640), 760
            )  # the whole form, as a tall screen shows it
            qtbot.wait(20)
            _save(dialog, f"preferences-{theme}")
            dialog.tabs.setCurrentWidget(dialog.general)
            _save(dialog, f"preferences-general-{theme}")
            dialog.reject()

            settings = window.open_settings()
            assert settings.context_length.text() == "2,048 tokens"
            # Taller than the test screen's room (where it scrolls), so the picture shows it all.
            settings.resize(max(settings.width(), 640), 1000)
            qtbot.wait(20)  # the scroll area hides its bar once the resize is laid out
            _save(settings, f"settings-{theme}")
            settings.reject()

            window.composer.edit.setPlainText("And of Spain?")
            qtbot.waitUntil(
                lambda: window.composer.token_label.text().endswith("/ 2,048 tokens"), timeout=10000
            )
            _save(window, f"composer-picker-{theme}")
        window.set_theme("light")
