"""app/isolated.py: a job in a child process ends as a value or as an exception with a message
for the person, however the child ends (result, error, crash, hang, cancel)."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from app.isolated import run_isolated


class Refused(Exception):
    pass


class Cancelled(Exception):
    pass


def run(job: str, *args: object, **options: object) -> object:
    return run_isolated(
        f"tests.isolated_jobs:{job}", *args, label="model.gguf", failure=Refused,
        cancelled=Cancelled, **options,
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
