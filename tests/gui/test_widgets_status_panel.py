"""The status bar panel: the progress bar says what it measures."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from ui.status_panel import StatusPanel


def test_the_progress_tooltip_follows_what_the_bar_shows(qtbot: QtBot) -> None:
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_model_status({"state": "ready", "model_id": "tiny"})
    panel.set_prefill(10, 400)
    assert panel.progress.toolTip() == "Reading the prompt: 10 of 400 tokens"
    panel.set_prefill(0, 0)

    panel.set_model_status({"state": "loading", "message": "Loading tiny", "done": 1, "total": 4})

    assert not panel.progress.isHidden()
    assert "prompt" not in panel.progress.toolTip()
    assert panel.progress.toolTip() == "Loading tiny"
