"""Work handed to the inference worker reports back on the GUI thread: `call`'s callbacks, the
start-up model's progress, and every controller state change they cause. A failure nobody
handles is logged with its traceback."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

import app.library.install
from app.chat.controller import ChatController
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.paths import ROOT
from tests.ui.window_harness import ScriptedEngine, scripted_worker
from ui.main import model_resolver

GUI = threading.main_thread().name


def test_call_callbacks_run_on_the_gui_thread(qtbot) -> None:
    worker = InferenceWorker()
    seen: list[tuple[str, str, Any]] = []

    def record(tag: str) -> Any:
        return lambda value: seen.append((tag, threading.current_thread().name, value))

    worker.call(lambda _engine: 42, on_done=record("done"))
    worker.call(lambda _engine: 1 / 0, on_done=record("not reached"), on_error=record("error"))
    # on_done itself fails (on the GUI thread): on_error hears about it there.
    worker.call(lambda _engine: "x", on_done=int, on_error=record("done failed"))
    qtbot.waitUntil(lambda: len(seen) == 3, timeout=5000)
    worker.shutdown()
    assert seen == [
        ("done", GUI, 42),
        ("error", GUI, "division by zero"),
        ("done failed", GUI, "invalid literal for int() with base 10: 'x'"),
    ]


def test_a_failure_without_an_error_handler_is_logged_with_its_traceback(
    qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    worker = InferenceWorker()
    served: list[str] = []

    def broken_on_done(_value: object) -> None:
        raise KeyError("missing")

    with caplog.at_level(logging.ERROR):
        worker.call(lambda _engine: 1 / 0)
        worker.call(lambda _engine: None, on_done=broken_on_done)
        worker.call(lambda _engine: "still serving", on_done=served.append)
        qtbot.waitUntil(lambda: bool(served), timeout=5000)
    worker.shutdown()
    failures = [r for r in caplog.records if r.exc_info is not None]
    assert [type(r.exc_info[1]) for r in failures] == [ZeroDivisionError, KeyError]
    assert all(r.exc_info[2] is not None for r in failures), "the traceback must be kept"
    assert served == ["still serving"]


def _fake_default_model(fail: bool) -> Any:
    def ensure(models_dir: Path, progress: Any) -> Path:
        for done in range(3):
            progress(done, 3)
        if fail:
            raise FileNotFoundError("The built-in model is missing from this build.")
        return models_dir / "built-in"

    return ensure


@pytest.mark.parametrize("fail", [False, True], ids=["loads", "cannot-resolve"])
def test_start_up_state_changes_all_happen_on_the_gui_thread(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: bool
) -> None:
    monkeypatch.setattr(app.library.install, "ensure_default_model", _fake_default_model(fail))
    worker = scripted_worker(ScriptedEngine([]))
    resolver = model_resolver(tmp_path / "models", None, worker.relay)
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        resolver,
    )
    writes: list[tuple[str, str, Any]] = []
    # A direct connection runs on the thread that changed the state.
    ctl.modelStatus.connect(
        lambda status: writes.append(
            (threading.current_thread().name, status.state, status.message)
        ),
        Qt.ConnectionType.DirectConnection,
    )
    ctl.start()
    qtbot.waitUntil(lambda: ctl.model_state in ("ready", "failed"), timeout=10000)
    ctl.shutdown()
    assert {thread for thread, _, _ in writes} == {GUI}
    assert ("loading", "Importing the built-in model") in [(s, m) for _, s, m in writes]
    expected = "failed" if fail else "ready"
    assert (ctl.model_state, writes[-1][1]) == (expected, expected)


_FAIL_WITHOUT_MLX = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QCoreApplication, QTimer
    from app.generation.worker import InferenceWorker

    app = QCoreApplication([])
    worker = InferenceWorker()
    worker.call(lambda _engine: 1 / 0, on_error=lambda message: (print(message), app.quit()))
    QTimer.singleShot(5000, app.quit)
    app.exec()
    worker.shutdown()
    print("mlx loaded:", "mlx.core" in sys.modules)
    """
)


def test_reporting_a_failure_on_the_gui_thread_does_not_load_mlx() -> None:
    """The window shows before MLX loads; telling the person about a failure must not load it."""
    root = ROOT
    done = subprocess.run(
        [sys.executable, "-c", _FAIL_WITHOUT_MLX],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)},
        timeout=60,
    )
    assert done.stdout.splitlines() == ["division by zero", "mlx loaded: False"], done.stderr
