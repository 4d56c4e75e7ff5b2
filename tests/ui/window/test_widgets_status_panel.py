"""The status bar panel: the progress bar says what it measures."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.generation.model_session import ModelStatus
from app.generation.worker_events import MemoryUse
from ui.window.status_panel import StatusPanel


def test_the_progress_tooltip_follows_what_the_bar_shows(qtbot: QtBot) -> None:
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_model_status(ModelStatus("ready", model_id="tiny"))
    panel.set_prefill(10, 400)
    assert panel.progress.toolTip() == "Reading the prompt: 10 of 400 tokens"
    panel.set_prefill(0, 0)

    panel.set_model_status(ModelStatus("loading", "Loading tiny", done=1, total=4))

    assert not panel.progress.isHidden()
    assert "prompt" not in panel.progress.toolTip()
    assert panel.progress.toolTip() == "Loading tiny"


def test_the_memory_label_shows_caches_in_memory_and_on_disk(qtbot: QtBot) -> None:
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_memory(MemoryUse(cache_bytes=0, disk_bytes=0, disk_budget_bytes=0, weights_bytes=0))
    assert panel.memory_label.isHidden()

    panel.set_memory(
        MemoryUse(cache_bytes=0, disk_bytes=3_400_000, disk_budget_bytes=0, weights_bytes=0)
    )
    assert not panel.memory_label.isHidden(), "saved caches show before a model loads"
    panel.set_memory(
        MemoryUse(
            cache_bytes=12_500_000,
            disk_bytes=3_400_000,
            disk_budget_bytes=0,
            weights_bytes=270_000_000,
        )
    )
    assert panel.memory_label.text() == (
        "Weights 270.0 MB · Caches 12.5 MB in memory, 3.4 MB on disk"
    )
