"""Settings that explain themselves (issue 18 item 7): a chat with its own system prompt is
marked under its title; the settings dialog says it is for this chat and explains each control."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_a_custom_system_prompt_is_marked_under_the_title(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        marker = window.header.prompt_marker
        cid = window.current_conversation_id
        assert not marker.isVisible()
        app.controller.update_settings(cid, system_prompt="You are a <b>pirate</b>.")
        window.models.settingsSaved.emit(cid)  # as the settings dialog does on Save
        assert marker.isVisible() and marker.text() == "Custom system prompt"
        assert "&lt;b&gt;pirate" in marker.toolTip()  # the prompt, shown literally

        other = app.controller.new_conversation()
        window.open_conversation(other)
        assert not marker.isVisible()
        window.open_conversation(cid)
        assert marker.isVisible()


def test_the_settings_dialog_says_it_is_for_this_chat_and_explains_each_control(
    qtbot, tmp_path: Path
) -> None:
    worker = scripted_worker(ScriptedEngine([]))
    with running_app(qtbot, tmp_path, tmp_path / "scripted", worker) as app:
        dialog = app.window.open_settings()
        intro = dialog.findChild(QLabel, "SettingsIntro")
        assert intro.text().startswith("These settings apply to this chat only.")
        hints = [label.text() for label in dialog.findChildren(QLabel, "FieldHint")]
        # The preset, the model, the system prompt, 7 sampling controls, the context length,
        # the overflow policy, speculation, the draft model and the knowledge per message.
        assert len(hints) == 15 and all(hints)
        assert "The longest reply, in tokens" in hints
        assert any(hint.startswith("The most tokens the model reads") for hint in hints)
        dialog.reject()
