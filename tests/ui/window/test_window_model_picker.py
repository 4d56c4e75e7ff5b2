"""The model picker beside the composer: it shows the open chat's model, switches it as the chat's
settings would (the model loads and the status bar says so), follows the chat on screen, and
cannot be used while a reply is being written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.window.test_window_new_chat_defaults import _library
from tests.ui.window_harness import ENDLESS, OFFSCREEN_NOISE, running_app, set_params


def _pick(picker, model_id: str) -> None:
    """Choose `model_id` in the list, as a click on its item does."""
    index = picker.box.findData(model_id)
    assert index >= 0, model_id
    picker.box.setCurrentIndex(index)
    picker.box.activated.emit(index)


pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_picking_a_model_switches_the_chat_and_the_picker_follows_the_chat(
    qtbot, tmp_path: Path, tiny_models_dir: Path
) -> None:
    _library(tmp_path, tiny_models_dir, "llama", "gemma3_text")
    with running_app(qtbot, tmp_path, tiny_models_dir / "llama") as app:
        window, store = app.window, app.store
        picker = window.model_picker
        assert picker.box.isVisible()
        first = window.current_conversation_id
        qtbot.waitUntil(lambda: picker.current_model() == "llama", timeout=5000)
        assert [picker.box.itemText(i) for i in range(picker.box.count())] == [
            "gemma3_text",
            "llama",
        ]
        assert "llama" in picker.box.toolTip()

        _pick(picker, "gemma3_text")
        assert store.get_conversation(first).model_id == "gemma3_text"
        assert window.statusBar().currentMessage() == "Loading gemma3_text for this conversation…"
        qtbot.waitUntil(
            lambda: (
                app.controller.model_state == "ready" and window.models.loaded_id() == "gemma3_text"
            ),
            timeout=60000,
        )
        assert window.status_panel.model_label.text() == "gemma3_text"

        # A second chat on the other model: the picker shows each chat's own.
        store.append_message(first, None, "user", "Keep this chat")
        window.new_chat()
        second = window.current_conversation_id
        app.controller.update_settings(second, model_id="llama")
        assert picker.current_model() == "llama"
        window.open_conversation(first)
        assert picker.current_model() == "gemma3_text"
        window.open_conversation(second)
        assert picker.current_model() == "llama"


def test_the_picker_waits_while_a_reply_is_written(qtbot, tmp_path: Path, llama_path: Path) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        picker = window.model_picker
        qtbot.waitUntil(lambda: picker.current_model() == "llama", timeout=5000)
        assert picker.box.currentText() == "llama (not in the library)"
        set_params(app, ENDLESS)
        window.composer.edit.setPlainText("Tell me a long story")
        window.composer.send()
        qtbot.waitUntil(app.controller.is_busy, timeout=5000)
        assert not picker.box.isEnabled()
        assert "once the reply is finished" in picker.box.toolTip()
        with qtbot.waitSignal(app.controller.busyChanged, timeout=10000):
            window.stream.request_stop()
        assert picker.box.isEnabled()
