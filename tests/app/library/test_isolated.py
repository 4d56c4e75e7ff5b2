"""app/isolated.py: a job in a child process ends as a value or as an exception with a message
for the person, however the child ends (result, error, crash, hang, cancel)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from app.library.isolated import run_isolated
from tests.paths import ROOT


class Refused(Exception):
    pass


class Cancelled(Exception):
    pass


def run(job: str, *args: object, **options: object) -> object:
    return run_isolated(
        f"tests.isolated_jobs:{job}",
        *args,
        label="model.gguf",
        failure=Refused,
        cancelled=Cancelled,
        **options,
    )


def test_the_result_comes_back_and_progress_is_relayed() -> None:
    seen: list[tuple[int, int]] = []
    assert run("count_to", 3, progress=lambda done, total: seen.append((done, total))) == (
        "counted to 3"
    )
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_an_error_in_the_child_arrives_with_its_message() -> None:
    with pytest.raises(Refused, match=r"^ValueError: the header is damaged$"):
        run("refuse", "the header is damaged")


def test_a_child_that_crashes_is_a_clear_error_naming_the_file() -> None:
    with pytest.raises(Refused) as caught:
        run("crash")
    assert "model.gguf" in str(caught.value) and "crashed (SIGSEGV)" in str(caught.value)
    assert "nothing was added" in str(caught.value)
    assert multiprocessing.active_children() == []


def test_a_child_that_hangs_is_stopped_at_its_time_limit() -> None:
    with pytest.raises(Refused, match="took longer than 1 seconds and was stopped"):
        run("hang", timeout_s=1)
    assert multiprocessing.active_children() == []


def test_cancel_stops_the_child() -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with pytest.raises(Cancelled, match="cancelled"):
        run("hang", cancel=cancel)
    assert multiprocessing.active_children() == []


def test_the_child_ends_when_the_app_quits_without_waiting_for_it(tmp_path: Path) -> None:
    """Closing the window mid-import leaves through os._exit (ui.main.run), which neither kills
    children nor runs cleanup; the child must not go on importing on its own."""
    pid_file = tmp_path / "child.pid"
    app = (
        "import os, threading, time\n"
        "from pathlib import Path\n"
        "from app.library.isolated import run_isolated\n"
        "if __name__ == '__main__':\n"
        "    threading.Thread(target=run_isolated, daemon=True, args=(\n"
        f"        'tests.isolated_jobs:hang_after_writing_pid', Path({str(pid_file)!r})),\n"
        "        kwargs=dict(label='x', failure=Exception, cancelled=Exception)).start()\n"
        f"    while not Path({str(pid_file)!r}).exists():\n"
        "        time.sleep(0.05)\n"
        "    os._exit(0)\n"
    )
    script = tmp_path / "quitting_app.py"
    script.write_text(app)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the script's own folder is not the repo
    subprocess.run([sys.executable, str(script)], check=True, timeout=60, env=env)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
