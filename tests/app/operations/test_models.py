"""The model library's operations without a window: copying a folder reports its bytes as typed
progress and announces that the library changed; a cancel adds nothing and is said as one."""

from __future__ import annotations

from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject

from app.library.entries import list_models
from app.operations.changes import Changes, app_changes
from app.operations.models import Transferred, add_folder
from app.operations.operation import Failure, FailureKind

TIMEOUT_MS = 60_000  # the copy checks the model in a child process (it imports MLX there)


def test_a_copy_reports_its_bytes_and_announces_the_library_changed(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    heard: list[Changes] = []
    view, owner = QObject(), QObject()
    app_changes().subscribe(view, heard.append)
    progress: list[Transferred] = []
    ended: list[Path | Failure] = []
    add_folder(owner, llama_path, tmp_path / "models", link=False).on_progress(
        progress.append
    ).on_success(ended.append).on_failure(ended.append).start()
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)
    shiboken6.delete(view)
    [folder] = ended
    assert isinstance(folder, Path) and [m.path for m in list_models(tmp_path / "models")] == [
        folder
    ]
    assert progress and progress[-1].done == progress[-1].total > 0
    assert [p.done for p in progress] == sorted(p.done for p in progress)
    assert heard == [Changes(model_library=True)]


def test_a_cancelled_copy_adds_nothing_and_says_so(qtbot, tmp_path: Path, llama_path: Path) -> None:
    owner = QObject()
    ended: list[Path | Failure] = []
    operation = add_folder(owner, llama_path, tmp_path / "models", link=False)
    operation.on_success(ended.append).on_failure(ended.append)
    operation.cancel()  # before it starts, as a click can land first
    operation.start()
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)
    [failure] = ended
    assert isinstance(failure, Failure) and failure.kind is FailureKind.CANCELLED
    assert failure.message == "The import was cancelled."
    assert list_models(tmp_path / "models") == []
