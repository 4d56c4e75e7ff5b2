"""The log in the data folder: worker and model-load failures with their tracebacks, warnings by
default and everything with --verbose, no conversation text unless verbose, a file that rotates,
and Help › Show Log Folder opening it."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl, qWarning
from PySide6.QtGui import QDesktopServices

from app import logs
from app.generation.worker import GenerationRequest, InferenceWorker
from app.logs import configure_logging
from app.paths import AppPaths
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, scripted_worker, start_app

SECRET = "my very private words"


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """configure_logging for one test; the root logger, its level and the hooks come back after."""
    root = logging.getLogger()
    level = root.level
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    yield tmp_path / "logs"
    for handler in root.handlers[:]:
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            root.removeHandler(handler)
            handler.close()
    monkeypatch.setattr(logs, "_handler", None)
    root.setLevel(level)


def _log_text(log_dir: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return (log_dir / "branchwise.log").read_text(encoding="utf-8")


class _FailingEngine(ScriptedEngine):
    def generate(self, messages, params, **kwargs):
        raise RuntimeError("the engine broke")


def test_worker_and_load_failures_are_logged_without_conversation_text(
    qtbot, log_dir: Path
) -> None:
    path = configure_logging(log_dir)
    assert path == log_dir / "branchwise.log"

    def broken_factory(model_path: Path, progress: object) -> None:
        raise ValueError(f"{model_path.name} has no weights")

    loader = InferenceWorker(broken_factory)
    with qtbot.waitSignal(loader.loadFailed, timeout=5000):
        loader.load_model(Path("/models/odd-model"))
    loader.shutdown()
    worker = scripted_worker(_FailingEngine([]))
    with qtbot.waitSignal(worker.modelLoaded, timeout=5000):
        worker.load_model(Path("/models/scripted"))
    with qtbot.waitSignal(worker.generationFailed, timeout=5000):
        worker.submit(GenerationRequest(1, [{"role": "user", "content": SECRET}], {}))
    worker.shutdown()

    text = _log_text(log_dir)
    assert (
        "WARNING [inference-worker] app.generation.worker: The model at /models/odd-model "
        "failed to load: odd-model has no weights" in text
    )
    assert "RuntimeError: the engine broke" in text and "Traceback" in text
    assert SECRET not in text


def test_debug_records_only_with_verbose(log_dir: Path) -> None:
    configure_logging(log_dir)
    logging.getLogger("app.test").debug("quiet detail %s", SECRET)
    logging.getLogger("app.test").warning("worth knowing")
    assert SECRET not in _log_text(log_dir) and "worth knowing" in _log_text(log_dir)
    configure_logging(log_dir, verbose=True)
    logging.getLogger("app.test").debug("verbose detail")
    assert "verbose detail" in _log_text(log_dir)


def test_the_log_rotates_instead_of_growing(log_dir: Path) -> None:
    configure_logging(log_dir)
    line = "x" * 1000
    for _ in range((logs.BACKUPS + 2) * logs.MAX_BYTES // len(line)):
        logging.getLogger("app.test").warning(line)
    files = sorted(p.name for p in log_dir.iterdir())
    assert files == ["branchwise.log"] + [f"branchwise.log.{n}" for n in range(1, logs.BACKUPS + 1)]
    assert all(p.stat().st_size <= logs.MAX_BYTES for p in log_dir.iterdir())


@pytest.mark.qt_no_exception_capture  # the hook under test chains to the one that was there
def test_an_uncaught_exception_is_logged(log_dir: Path) -> None:
    configure_logging(log_dir)
    try:
        raise OSError("disk vanished")
    except OSError:
        sys.excepthook(*sys.exc_info())
    assert "CRITICAL" in _log_text(log_dir) and "OSError: disk vanished" in _log_text(log_dir)


@pytest.mark.qt_log_ignore("the platform plugin is unhappy")
def test_qt_warnings_are_logged(log_dir: Path) -> None:
    configure_logging(log_dir)
    qWarning("the platform plugin is unhappy")
    assert "WARNING [MainThread] qt: the platform plugin is unhappy" in _log_text(log_dir)


@pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)
def test_help_show_log_folder_opens_the_logs_folder(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", opened.append)
    launched = start_app(
        qtbot,
        tmp_path,
        tmp_path / "scripted",
        worker=scripted_worker(ScriptedEngine([])),
        wait_ready=False,
    )
    bar = launched.window.menuBar()
    help_menu = next(a.menu() for a in bar.actions() if a.text() == "&Help")
    show = next(a for a in help_menu.actions() if a.text() == "Show &Log Folder")
    show.trigger()
    folder = AppPaths(tmp_path.resolve()).logs_dir
    assert [url.toLocalFile() for url in opened] == [str(folder)]
    assert folder.is_dir()
    launched.window.close()
