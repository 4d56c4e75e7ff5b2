"""Knowledge folders in the running app: indexed at start-up in the background (what changed
since last time), the Knowledge page opened from File › Knowledge…, and a folder added while a
reply generates waiting for the reply to end (the app's pause gate held by the real worker),
said on the page and in the status bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import app_pause_gate
from app.paths import AppPaths
from tests.app.knowledge.documents import write
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
)
from ui import main
from ui.knowledge.folder_state import ShownState

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

TIMEOUT_MS = 20_000


def _notes(folder: Path, count: int) -> Path:
    for n in range(count):
        write(folder / f"note-{n}.md", f"# Note {n}\n\nGlaciers move slowly, part {n}.")
    return folder


def test_folders_are_indexed_at_start_and_wait_while_a_reply_generates(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(main, "START_DELAY_MS", 0)
    data = tmp_path / "data"
    database = AppPaths.resolve(str(data)).knowledge_database
    with KnowledgeIndex.open(database) as index:  # added last time, never indexed
        index.add("Notes", _notes(tmp_path / "notes", 3))
    # A reply long enough to add a folder while it is written (6 characters every 20 ms).
    engine = ScriptedEngine(["Glaciers " * 40], step_s=0.02)
    with running_app(qtbot, data, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        folders = window.knowledge_folders.activity.folders

        def indexed(name: str) -> int:
            with KnowledgeIndex.open(database) as index:
                return index.status(name).files

        qtbot.waitUntil(
            lambda: folders.running is None and indexed("Notes") == 3, timeout=TIMEOUT_MS
        )
        window.menu_actions.knowledge.trigger()
        page = window.knowledge_folders.page
        assert page is not None and page.isVisible()
        qtbot.waitUntil(lambda: page.state_of("Notes") is ShownState.UP_TO_DATE, timeout=TIMEOUT_MS)

        with qtbot.waitSignal(app.controller.busyChanged, timeout=TIMEOUT_MS):
            window.send("Tell me about glaciers.")
        qtbot.waitUntil(lambda: app_pause_gate().paused, timeout=TIMEOUT_MS)  # it generates
        page.add("More", _notes(tmp_path / "more", 2))
        qtbot.waitUntil(lambda: page.state_of("More") is ShownState.PAUSED, timeout=TIMEOUT_MS)
        indicator = window.knowledge_folders.indicator
        assert indicator.isVisible() and indicator.text() == "Indexing More · paused"
        assert indexed("More") == 0, "nothing read while the reply is written"

        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: page.state_of("More") is ShownState.UP_TO_DATE, timeout=TIMEOUT_MS)
        assert indexed("More") == 2 and not indicator.isVisible()
