"""A chat with its own system prompt is marked under its title (issue 18 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

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
