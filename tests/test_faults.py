"""Faults a person can cause without meaning to, on a real data folder: a second launch on the
same folder and a stale lock left by a killed app (real processes), the database file turning
read-only, the model folder deleted while loaded. After each, everything typed, sent and streamed
so far is still there. (Faults of the text itself — a full disk at a reply's end, a kill while
streaming, drafts — are in tests/test_faults_text.py; a full disk while saving caches in
tests/gui/test_window_caches.py; damaged model files in tests/test_fuzz_model_files.py.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
from PySide6.QtCore import QLockFile

from app.paths import AppPaths
from app.store.conversations import Store
from tests.paths import ROOT
from tests.ui.window_harness import SHORT, running_app, send_and_wait, set_params, start_app
from ui.main import claim_data_folder
from ui.single_instance import LockError

WORD, REPEATS = "streamed ", 5000
REPLY = WORD * REPEATS
DRAFT = "a draft being typed"
SENT = "Hello there"

# The app as launched by `ui.main.main`, but with a scripted engine (no MLX) that streams a long
# reply: it sends a message, types a draft, puts another window in front, and says READY once
# part of the reply is on disk. It reports a hand-over from a later launch, and quits (through
# `ui.main.run`, the app's own exit) when its stdin closes.
_RUNNING = textwrap.dedent(
    f"""
    import json, sys
    from PySide6.QtCore import QSocketNotifier, QTimer
    from PySide6.QtWidgets import QWidget
    from app.logs import configure_logging
    from app.paths import AppPaths
    from tests.ui.window_harness import ScriptedEngine, scripted_worker
    from ui.main import claim_data_folder, create_application, launch, parse_args, run

    argv = sys.argv[1:]
    args = parse_args(argv)
    paths = AppPaths.resolve(args.data_dir)
    configure_logging(paths.logs_dir)
    create_application()
    instance = claim_data_folder(paths, argv)
    engine = ScriptedEngine([{WORD!r} * {REPEATS}], chars_per_step=5, step_s=0.02)
    launched = launch(args, worker=scripted_worker(engine), instance=instance)
    window, ctl, store = launched.window, launched.controller, launched.store
    other = QWidget()
    other.setWindowTitle("another app's window")
    reply_id = []

    def say(tag, **fields):
        print(tag, json.dumps(fields), flush=True)

    def start():
        if ctl.model_state != "ready":
            QTimer.singleShot(50, start)
            return
        cid = window.current_conversation_id
        ctl.update_settings(cid, params={{"temperature": 0.0, "max_tokens": 100000, "seed": 0}})
        ctl.send(cid, {SENT!r})
        window.composer.edit.setPlainText({DRAFT!r})
        other.show()
        other.activateWindow()
        QTimer.singleShot(50, wait_for_disk)

    def wait_for_disk():
        reply = store.active_path(window.current_conversation_id)[-1]
        if reply.role != "assistant" or not reply.content or not other.isActiveWindow():
            QTimer.singleShot(50, wait_for_disk)
            return
        reply_id.append(reply.id)
        say("READY", content=reply.content, pid=__import__("os").getpid())

    def handed(argv):
        # After the window's own handler (connected first) has asked to come to the front.
        QTimer.singleShot(300, lambda: say(
            "HANDED", argv=argv, active=window.isActiveWindow(),
            draft=window.composer.edit.toPlainText(), busy=ctl.is_busy(),
            status=store.get_message(reply_id[0]).status))

    instance.activationRequested.connect(handed)
    quit_on_eof = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    quit_on_eof.activated.connect(lambda: (other.close(), window.close()))
    QTimer.singleShot(0, start)
    sys.exit(run(launched))
    """
)

# A plain `ui.main.main` start that prints every message it finds, then closes its window.
_REOPEN = textwrap.dedent(
    """
    import json, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from ui.main import create_application, main
    from ui.window.main_window import MainWindow

    def report():
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow))
        store = window.store
        found = [(m.role, m.content, m.status) for c in store.list_conversations()
                 for m in store.all_messages(c.id)]
        print("FOUND", json.dumps(found), flush=True)
        window.close()

    create_application()
    QTimer.singleShot(0, report)
    sys.exit(main(sys.argv[1:]))
    """
)


def _env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}


def _start_running(data_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            _RUNNING,
            "--data-dir",
            str(data_dir),
            "--model",
            str(data_dir / "scripted"),
        ],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(stream: IO[str] | None, tag: str, process: subprocess.Popen[str]) -> Any:
    """The fields of the next line that starts with `tag`; fails if the process ends first."""
    assert stream is not None
    for line in stream:
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1 :])
    process.wait(10)
    raise AssertionError(f"no {tag} line; stderr: {process.stderr.read()[-3000:]}")  # type: ignore[union-attr]


def _quit(process: subprocess.Popen[str]) -> None:
    """Close the app as its window's close would, and check it left cleanly."""
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(30) == 0, process.stderr.read()[-3000:]  # type: ignore[union-attr]


def _stored(data_dir: Path) -> list[tuple[str, str, str]]:
    store = Store.open(AppPaths(data_dir).database)
    try:
        return [
            (m.role, m.content, m.status)
            for c in store.list_conversations()
            for m in store.all_messages(c.id)
        ]
    finally:
        store.close()


def _launch(data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ui.main", "--data-dir", str(data_dir), *extra],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@contextmanager
def _app_running(data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    with _start_running(data_dir) as process:  # closes its pipes on the way out
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    with _app_running(tmp_path / "data") as process:
        yield process


def test_a_second_launch_hands_over_and_the_running_app_keeps_everything(
    tmp_path: Path, running: subprocess.Popen[str]
) -> None:
    data_dir = tmp_path / "data"
    ready = _line(running.stdout, "READY", running)

    second = _launch(data_dir, "--model", "/elsewhere")

    assert second.returncode == 0, second.stderr[-3000:]
    handed = _line(running.stdout, "HANDED", running)
    assert handed["argv"] == ["--data-dir", str(data_dir), "--model", "/elsewhere"]
    assert handed["active"], "the running app's window must come to the front"
    # The second launch left before opening the store: it did not mark the reply that is still
    # streaming as interrupted, nor stop it, nor touch the draft.
    assert handed["status"] == "streaming" and handed["busy"]
    assert handed["draft"] == DRAFT
    _quit(running)
    (user, sent, _), (assistant, streamed, status) = _stored(data_dir)
    assert (user, sent) == ("user", SENT)
    assert assistant == "assistant" and status == "stopped"
    assert streamed.startswith(ready["content"]) and REPLY.startswith(streamed)


def test_a_launch_on_another_data_folder_runs_on_its_own(
    tmp_path: Path, running: subprocess.Popen[str]
) -> None:
    _line(running.stdout, "READY", running)
    with _app_running(tmp_path / "other") as elsewhere:
        _line(elsewhere.stdout, "READY", elsewhere)
        _quit(elsewhere)
    _quit(running)
    assert "HANDED" not in running.stdout.read()  # type: ignore[union-attr]
    for folder in ("data", "other"):
        user = _stored(tmp_path / folder)[0]
        assert user[:2] == ("user", SENT)


def test_a_lock_left_by_a_killed_app_is_taken_over_and_its_words_are_kept(
    tmp_path: Path, running: subprocess.Popen[str]
) -> None:
    data_dir = tmp_path / "data"
    ready = _line(running.stdout, "READY", running)
    os.kill(ready["pid"], signal.SIGKILL)
    running.wait(10)
    assert AppPaths(data_dir).lock_file.exists(), "the killed app must leave its lock behind"

    started = time.monotonic()
    again = subprocess.run(
        [sys.executable, "-c", _REOPEN, "--data-dir", str(data_dir), "--model", "/nowhere"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert again.returncode == 0, again.stderr[-3000:]
    assert time.monotonic() - started < 30
    found = next(x for x in again.stdout.splitlines() if x.startswith("FOUND "))
    (user, sent, _), (assistant, streamed, status) = json.loads(found[len("FOUND ") :])
    assert (user, sent) == ("user", SENT)
    # What had reached the disk before the kill is all there, marked as cut off.
    assert assistant == "assistant" and status == "interrupted"
    assert streamed.startswith(ready["content"]) and REPLY.startswith(streamed)
    assert not AppPaths(data_dir).lock_file.exists(), "a clean exit gives the lock back"


def test_a_folder_held_by_an_app_that_does_not_answer_is_refused_before_the_store_opens(
    qtbot, tmp_path: Path
) -> None:
    paths = AppPaths.resolve(tmp_path)
    holder = QLockFile(str(paths.lock_file))  # a live owner that never listens
    assert holder.tryLock(0)
    try:
        with pytest.raises(LockError, match="does not respond") as refused:
            claim_data_folder(paths, ["--data-dir", str(tmp_path)])
    finally:
        holder.unlock()
    assert str(paths.data_dir) in str(refused.value)
    assert not paths.database.exists()


# ---- the files under the app -------------------------------------------------------------------
# These drive the real window and worker with the tiny model.


def test_a_database_that_refuses_writes_loses_nothing_typed(
    qtbot: Any, tmp_path: Path, llama_path: Path
) -> None:
    """The database file turning read-only under the running app (tests run as root, which file
    permissions do not stop, so SQLite is told directly: the same "attempt to write a readonly
    database" the app would meet)."""
    with running_app(qtbot, tmp_path, llama_path) as app:
        window, store = app.window, app.store
        cid = set_params(app, SHORT)
        send_and_wait(qtbot, app, "Saved before")
        connection = store._conn  # the store's own connection, as the file under it changes
        connection.execute("PRAGMA query_only = ON")
        composer = window.composer
        composer.edit.setFocus()
        qtbot.keyClicks(composer.edit, "Typed while the file is read-only")
        qtbot.keyClick(composer.edit, "\r")
        qtbot.waitUntil(lambda: "readonly" in window.banner.text.replace("-", ""), timeout=5000)
        assert composer.text() == "Typed while the file is read-only"  # still there to send
        assert not app.controller.is_busy()
        connection.execute("PRAGMA query_only = OFF")
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=30000, check_params_cb=lambda busy: not busy
        ):
            qtbot.keyClick(composer.edit, "\r")
        contents = [m.content for m in store.active_path(cid)]
        assert contents[0] == "Saved before" and contents[2] == "Typed while the file is read-only"
        assert (
            len(contents) == 4
            and store.get_message(store.active_path(cid)[3].id).status == "complete"
        )


def test_the_model_folder_deleted_while_loaded_keeps_the_chat_working(
    qtbot: Any, tmp_path: Path, llama_path: Path
) -> None:
    """The weights are in memory once loaded: replies go on; the library says the folder is
    gone, and the next start says so instead of failing silently."""
    model = Path(shutil.copytree(llama_path, tmp_path / "model"))
    data = tmp_path / "data"
    with running_app(qtbot, data, model) as app:
        cid = set_params(app, SHORT)
        send_and_wait(qtbot, app, "Before the folder went")
        shutil.rmtree(model)
        send_and_wait(qtbot, app, "After the folder went")
        path = app.store.active_path(cid)
        assert [m.status for m in path] == ["complete"] * 4
        assert path[3].content  # the reply to the message sent after the folder was deleted
    app = start_app(qtbot, data, model, wait_ready=False)
    qtbot.waitUntil(lambda: app.controller.model_state == "failed", timeout=30000)
    assert "no model folder" in app.window.banner.text.lower()
    assert [m.content for m in app.store.active_path(cid)][::2] == [
        "Before the folder went",
        "After the folder went",
    ]
