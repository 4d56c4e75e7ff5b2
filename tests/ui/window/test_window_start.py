"""Starting the app: the window first, the model behind it; first start with the built-in model;
a restart that puts everything back; a damaged database reported, not hidden."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSize

from app.library.entries import list_models
from app.library.install import DEFAULT_MODEL_NAME
from app.paths import AppPaths
from app.store.conversations import NotFoundError
from tests.paths import ROOT
from tests.perf import RUNS, best_of
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    SHORT,
    running_app,
    send_and_wait,
    set_params,
    start_app,
    wait_ready_model,
)

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

# Launch to a visible window, over a bare PySide6 process putting up an empty QMainWindow on
# the same machine just before: Python, Qt and the platform plugin are the floor. Measured
# 0.14-0.32 s bare, 0.94-1.29 s Branchwise (2.5-6.9x: the short baseline is the noisy one);
# the old fixed 1.5 s was about 7x the bare window here. Waiting for the model would be 30x.
MAX_OVER_BARE_QT = 10.0
_BARE_QT = textwrap.dedent(
    """
    import sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication(sys.argv)
    window = QMainWindow()
    window.show()

    def report():
        print("VISIBLE", time.time(), window.isVisible(), "bare", flush=True)
        print("NOTICE", "bare", flush=True)
        window.close()
        app.quit()

    QTimer.singleShot(0, report)
    sys.exit(app.exec())
    """
)
_DRIVER = textwrap.dedent(
    """
    import sys, time
    from PySide6.QtCore import QTimer
    from ui.main import launch, parse_args, run

    launched = launch(parse_args(sys.argv[1:]))

    def report():
        window = launched.window
        print("VISIBLE", time.time(), window.isVisible(), launched.controller.model_state,
              flush=True)
        print("NOTICE", window.composer.notice.text(), flush=True)
        window.close()

    QTimer.singleShot(0, report)  # runs once the event loop has put the window up
    sys.exit(run(launched))
    """
)


def _seconds_until_visible(driver: str, data_dir: Path, model: Path, pycache: Path) -> float:
    """From spawning `driver` to its window being up (the event loop running).

    Bytecode is cached (in `pycache`), as it is for an installed app: pip and PyInstaller
    compile it ahead, while PYTHONDONTWRITEBYTECODE in a dev shell would recompile every start.
    """
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", driver, "--data-dir", str(data_dir), "--model", str(model)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("VISIBLE"))
    _, shown_at, visible, model_state = line.split()
    assert visible == "True"
    if driver is _DRIVER:
        assert model_state == "loading", "the window must not wait for the model"
        notice = next(x for x in done.stdout.splitlines() if x.startswith("NOTICE"))
        # The first frame already says the model is on its way, never "no model is loaded".
        assert "Preparing the model" in notice
    return float(shown_at) - started


@pytest.mark.perf
def test_window_is_visible_within_a_small_multiple_of_a_bare_qt_window(
    tmp_path: Path, llama_path: Path
) -> None:
    pycache = tmp_path / "pycache"
    for driver in (_BARE_QT, _DRIVER):  # writes the bytecode
        _seconds_until_visible(driver, tmp_path / "warm-up", llama_path, pycache)
    runs = iter(range(RUNS))

    def share() -> float:
        data_dir = tmp_path / f"data{next(runs)}"
        bare = _seconds_until_visible(_BARE_QT, data_dir, llama_path, pycache)
        return _seconds_until_visible(_DRIVER, data_dir, llama_path, pycache) / bare

    ratio = best_of(share, MAX_OVER_BARE_QT)
    assert ratio < MAX_OVER_BARE_QT, f"the window took {ratio:.1f}x a bare Qt window to appear"


_CLOSE_AT_ONCE = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QTimer
    from ui.main import launch, parse_args, run

    launched = launch(parse_args(sys.argv[1:]))
    QTimer.singleShot(300, launched.window.close)
    sys.exit(run(launched))
    """
)


@pytest.mark.slow
def test_closing_while_the_built_in_model_is_imported_exits_cleanly(tmp_path: Path) -> None:
    # First start: the worker imports MLX and the GGUF for several seconds, longer than the
    # 2 s the window waits for it on close. The 60 s limit is a deadline for a hang only (the
    # close takes about 4 s here), so the process's exit is what is checked.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", _CLOSE_AT_ONCE, "--data-dir", str(tmp_path / "data")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "terminate called" not in done.stderr


@pytest.mark.slow
def test_first_start_imports_the_built_in_model_and_selects_it(qtbot, tmp_path: Path) -> None:
    launched = start_app(qtbot, tmp_path, None, wait_ready=False)
    window = launched.window
    assert window.isVisible()
    assert not window.composer.edit.isEnabled()
    assert "You can send once the model is ready" in window.composer.notice.text()
    wait_ready_model(qtbot, launched, timeout_ms=120000)
    library = list_models(AppPaths(tmp_path).models_dir)
    assert [(m.name, m.builtin, m.problem) for m in library] == [(DEFAULT_MODEL_NAME, True, None)]
    loaded = launched.controller.model_info
    assert loaded is not None and loaded.model_id == library[0].path.name
    assert launched.controller.preferences.model_id == library[0].path.name
    assert window.status_panel.model_label.text() == DEFAULT_MODEL_NAME
    assert window.composer.edit.isEnabled() and not window.composer.notice.isVisible()
    assert window.current_conversation_id is not None
    window.close()


def test_restart_restores_conversation_branch_and_geometry(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "First chat")
        keep = app.controller.new_conversation()
        window.open_conversation(keep)
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Second chat")
        reply = app.store.active_path(keep)[-1]
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=30000, check_params_cb=lambda busy: not busy
        ):
            app.controller.regenerate(reply.id)
        app.controller.switch_sibling(app.store.active_path(keep)[-1].id, -1)
        assert app.store.active_path(keep)[-1].id == reply.id
        window.resize(QSize(760, 540))
        window.splitter.setSizes([250, 510])
        sizes = window.splitter.sizes()
        size = window.size()

    with running_app(qtbot, tmp_path, llama_path) as again:
        window = again.window
        assert window.current_conversation_id == keep
        assert window.size() == size
        assert window.splitter.sizes() == sizes
        shown = window.chat_view.message_widget(str(reply.id))
        assert shown is not None
        assert (shown.view.sibling_index, shown.view.sibling_count) == (1, 2)
        assert window.sidebar.model.rowCount() == 2
        assert window.title_label.text() == "Second chat"


def test_deleted_conversations_are_purged_when_the_window_closes(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        cid = app.window.current_conversation_id
        app.window.sidebar_commands.delete_conversation(cid)
    with running_app(qtbot, tmp_path, llama_path) as again:
        again.window.sidebar_commands.undo_delete()  # nothing left to undo after a restart
        assert cid not in [c.id for c in again.store.list_conversations()]
        with pytest.raises(NotFoundError):
            again.store.restore_conversation(cid)


def test_a_damaged_database_is_set_aside_and_reported(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    (tmp_path / "conversations.sqlite3").write_bytes(b"this is not a database" * 100)
    with running_app(qtbot, tmp_path, llama_path) as app:
        notice = app.window.banner.text
        assert "damaged" in notice and str(app.store.recovered_from) in notice
        assert app.store.recovered_from.read_bytes().startswith(b"this is not a database")


def test_a_model_that_fails_to_load_says_why_in_the_composer(qtbot, tmp_path: Path) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "llama"}))
    launched = start_app(qtbot, tmp_path / "data", broken, wait_ready=False)
    qtbot.waitUntil(lambda: launched.controller.model_state == "failed", timeout=30000)
    window = launched.window
    assert not window.composer.edit.isEnabled()
    assert "Model Library" in window.composer.notice.text()
    assert window.status_panel.model_label.text() == "No model loaded"
    assert "could not be loaded" in window.banner.text
    window.close()
