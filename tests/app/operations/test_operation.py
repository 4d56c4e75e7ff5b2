"""The one way work runs off the GUI thread (app.operations): the result and each progress report
reach the GUI thread in order, a cancel stops the job between its steps, an expected failure
arrives with its message, a bug's traceback is logged and the person still told, what changed
reaches every subscriber before the success callback, and nothing is delivered once the owner
is gone."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QObject

from app.operations.changes import ChangeNotifier, Changes
from app.operations.operation import (
    Failure,
    FailureKind,
    JobContext,
    Operation,
    on_worker,
)

TIMEOUT_MS = 5000


class _Seen:
    """What the callbacks were given, and on which thread."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.threads: set[str] = set()

    def record(self, kind: str) -> Callable[[Any], None]:
        def callback(value: Any) -> None:
            self.threads.add(threading.current_thread().name)
            self.events.append((kind, value))

        return callback

    def watch[R, P](self, operation: Operation[R, P]) -> Operation[R, P]:
        return (
            operation.on_progress(self.record("progress"))
            .on_success(self.record("success"))
            .on_failure(self.record("failure"))
        )

    def ended(self) -> bool:
        return any(kind in ("success", "failure") for kind, _ in self.events)


def test_the_result_and_the_progress_arrive_on_the_gui_thread_in_order(qtbot) -> None:
    owner = QObject()
    seen = _Seen()

    def count(context: JobContext[int]) -> str:
        for step in range(1, 6):
            context.report(step)
        return "counted"

    operation = seen.watch(Operation(owner, "Counting", count)).start()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    assert seen.events == [*(("progress", n) for n in range(1, 6)), ("success", "counted")]
    assert seen.threads == {threading.main_thread().name}
    assert operation.wait(1) and not operation.running
    # Done, it leaves nothing behind in its owner, and a later delete of the owner cancels
    # nothing.
    qtbot.waitUntil(lambda: not owner.children(), timeout=TIMEOUT_MS)
    shiboken6.delete(owner)
    assert not operation.cancelled


def test_a_callback_never_runs_inside_start(qtbot) -> None:
    seen, owner = _Seen(), QObject()
    operation = seen.watch(Operation(owner, "Quick", lambda _context: 1))
    operation.start()
    operation.wait(1)
    assert seen.events == []  # the job is done, but its result waits for the event loop
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    assert seen.events == [("success", 1)]


def test_a_cancel_stops_the_job_between_its_steps(qtbot) -> None:
    seen = _Seen()
    first_step_done, cancel_asked = threading.Event(), threading.Event()
    steps: list[int] = []

    def work(context: JobContext[int]) -> int:
        for step in range(1, 100):
            context.raise_if_cancelled()
            steps.append(step)
            context.report(step)
            if step == 1:
                first_step_done.set()
                cancel_asked.wait(TIMEOUT_MS / 1000)
        return len(steps)

    owner = QObject()
    operation = seen.watch(Operation(owner, "Stepping", work)).start()
    assert first_step_done.wait(TIMEOUT_MS / 1000)
    operation.cancel()
    cancel_asked.set()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    assert steps == [1]
    kind, failure = seen.events[-1]
    assert kind == "failure" and failure.kind is FailureKind.CANCELLED
    assert operation.cancelled


def test_an_expected_failure_arrives_with_its_message_and_logs_nothing(
    qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    seen, owner = _Seen(), QObject()

    def refuse(_context: JobContext[None]) -> None:
        raise LookupError("There is no such export.  ")

    seen.watch(Operation(owner, "Reading", refuse, expected=(LookupError,))).start()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    [(kind, failure)] = seen.events
    assert kind == "failure" and isinstance(failure, Failure)
    assert (failure.kind, failure.message) == (FailureKind.REFUSED, "There is no such export.")
    assert isinstance(failure.error, LookupError)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_bug_is_logged_with_its_traceback_and_still_reported(
    qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    seen, owner = _Seen(), QObject()

    def buggy(_context: JobContext[None]) -> None:
        {}["missing"]  # the bug under test: a KeyError

    seen.watch(Operation(owner, "Sorting files", buggy, expected=(OSError,))).start()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    [(_, failure)] = seen.events
    assert failure.kind is FailureKind.BUG
    assert failure.message == "Sorting files stopped on an unexpected error: KeyError('missing')"
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "Sorting files" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is KeyError


def test_what_changed_reaches_every_subscriber_before_the_success_callback(qtbot) -> None:
    notifier = ChangeNotifier()
    heard: list[tuple[str, object]] = []
    sidebar, library = QObject(), QObject()
    notifier.subscribe(sidebar, lambda changes: heard.append(("sidebar", changes)))
    notifier.subscribe(library, lambda changes: heard.append(("library", changes)))
    imported = Changes(conversations=frozenset({4, 7}), conversation_list=True)
    owner = QObject()
    operation = Operation(
        owner, "Importing", lambda _context: [4, 7], changes=lambda ids: imported, notifier=notifier
    )
    operation.on_success(lambda ids: heard.append(("success", ids))).start()
    qtbot.waitUntil(lambda: len(heard) == 3, timeout=TIMEOUT_MS)
    assert heard == [("sidebar", imported), ("library", imported), ("success", [4, 7])]

    # A subscriber deleted since hears nothing more; the others still do.
    shiboken6.delete(sidebar)
    heard.clear()
    notifier.announce(Changes(model_library=True))
    assert heard == [("library", Changes(model_library=True))]
    notifier.announce(Changes())  # nothing changed: nobody is disturbed
    assert len(heard) == 1


def test_a_failure_announces_nothing(qtbot) -> None:
    notifier = ChangeNotifier()
    heard: list[Changes] = []
    view = QObject()
    notifier.subscribe(view, heard.append)
    seen, owner = _Seen(), QObject()

    def fail(_context: JobContext[None]) -> None:
        raise OSError("The disk is full.")

    seen.watch(
        Operation(
            owner,
            "Writing",
            fail,
            expected=(OSError,),
            changes=lambda _: Changes(conversation_list=True),
            notifier=notifier,
        )
    ).start()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    assert [kind for kind, _ in seen.events] == ["failure"] and heard == []


def test_nothing_is_delivered_once_the_owner_is_gone_and_the_job_is_cancelled(qtbot) -> None:
    owner = QObject()
    seen = _Seen()
    notifier = ChangeNotifier()
    heard: list[Changes] = []
    view = QObject()
    notifier.subscribe(view, heard.append)
    started, release = threading.Event(), threading.Event()

    def slow(context: JobContext[int]) -> str:
        started.set()
        release.wait(TIMEOUT_MS / 1000)
        context.report(1)  # to no one: the owner has gone
        return "written"

    operation = seen.watch(
        Operation(
            owner,
            "Importing",
            slow,
            notifier=notifier,
            changes=lambda _: Changes(conversation_list=True),
        )
    )
    operation.start()
    assert started.wait(TIMEOUT_MS / 1000)
    shiboken6.delete(owner)  # its dialog closed mid-way
    assert operation.cancelled
    release.set()
    assert operation.wait(TIMEOUT_MS / 1000)
    # What the job wrote is still announced to the views; its owner hears nothing.
    qtbot.waitUntil(lambda: bool(heard), timeout=TIMEOUT_MS)
    qtbot.wait(100)  # the event loop runs: anything posted to the owner would be delivered now
    assert heard == [Changes(conversation_list=True)]
    assert seen.events == []


def test_a_job_can_run_on_the_inference_worker(qtbot) -> None:
    class Worker:
        """Runs what it is given on its own thread, as the inference worker's queue does."""

        def __init__(self) -> None:
            self.threads: list[str] = []

        def call(self, fn: Callable[[Any], Any]) -> None:
            def run() -> None:
                self.threads.append(threading.current_thread().name)
                fn(None)

            threading.Thread(target=run, name="inference-worker").start()

    worker, owner = Worker(), QObject()
    seen = _Seen()
    seen.watch(
        Operation(owner, "Converting", lambda _context: "converted", runs_on=on_worker(worker))
    ).start()
    qtbot.waitUntil(seen.ended, timeout=TIMEOUT_MS)
    assert seen.events == [("success", "converted")] and worker.threads == ["inference-worker"]


def test_an_operation_runs_once(qtbot) -> None:
    owner = QObject()
    operation = Operation(owner, "Once", lambda _context: None).start()
    with pytest.raises(RuntimeError, match="runs once"):
        operation.start()
    operation.wait(1)
