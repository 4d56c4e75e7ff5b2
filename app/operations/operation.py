"""One piece of work off the GUI thread: a job run in the background that reports typed progress,
can be cancelled, and ends in its result or a `Failure`, each delivered to callbacks on the GUI
thread; on success, what it changed is announced to every view (`app.operations.changes`).

    operation = Operation(dialog, "Importing chats", job, expected=(StoreError, OSError),
                          changes=lambda report: Changes(conversation_list=True))
    operation.on_progress(show).on_success(report).on_failure(say).start()

The job gets a `JobContext`: `report(progress)`, and `cancelled` to look at between its steps
(or `cancel_event` for library functions that take a `threading.Event`). It runs on a daemon
thread (`in_thread`), or on the inference worker (`on_worker`) when it runs MLX.

What the job hands back travels through a queued signal of a relay that is a child of the
operation's owner, so it runs on the owner's thread, in the order it was sent. Once the owner is
deleted (a dialog closed mid-way) the relay goes with it: the job is told to cancel, and nothing
more is delivered, so no callback ever reaches a deleted object. What a success changed is
announced all the same (through the notifier, which outlives every owner, and ahead of the
success callbacks): a conversation written before the dialog closed is listed.

An exception of one of the `expected` types is the person's to read: its text is the failure's
message. Any other is a bug: its traceback goes to the log, and the person still hears that the
operation stopped. A failure while a cancel was asked counts as the cancellation.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, Self

from PySide6.QtCore import QObject

from app.gui_relay import GuiRelay
from app.operations.changes import ChangeNotifier, Changes, app_changes

_log = logging.getLogger(__name__)

# Runs `body` somewhere off the GUI thread; the string names the work (the thread's name).
Launcher = Callable[[str, Callable[[], None]], None]


class OperationCancelled(Exception):
    """Raised by `JobContext.raise_if_cancelled`: the job stops where it stands."""


class FailureKind(Enum):
    REFUSED = "refused"  # an expected error: its message says what was wrong
    CANCELLED = "cancelled"  # asked to stop, by the person or by the owner going away
    BUG = "bug"  # any other exception: its traceback is in the log


@dataclass(frozen=True, slots=True)
class Failure:
    kind: FailureKind
    message: str  # for the person
    error: BaseException  # for code that tells failures apart by type


class JobContext[P]:
    """What a job sees of its operation, on the job's thread."""

    def __init__(self, cancel_event: threading.Event, report: Callable[[P], None]) -> None:
        self.cancel_event = cancel_event
        self._report = report

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def raise_if_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise OperationCancelled("Cancelled.")

    def report(self, progress: P) -> None:
        """Hand `progress` to the progress callbacks on the GUI thread, in the order reported."""
        self._report(progress)


def in_thread(name: str, body: Callable[[], None]) -> None:
    """Run `body` on a new daemon thread: a job stuck on the network must not keep the app from
    quitting, and what a job writes is whole by itself (one transaction, a staging folder)."""
    threading.Thread(target=body, name=name, daemon=True).start()


class EngineQueue(Protocol):
    """The inference worker, as far as running a job on its thread goes."""

    def call(self, fn: Callable[[Any], Any]) -> None: ...


def on_worker(worker: EngineQueue) -> Launcher:
    """Run jobs on the inference worker, the one thread that may run MLX (behind whatever it is
    doing already)."""

    def launch(_name: str, body: Callable[[], None]) -> None:
        worker.call(lambda _engine: body())

    return launch


class _Gate:
    """Whether the relay may still be posted to. The lock keeps a post from the job's thread
    from racing the relay's deletion on the GUI thread: `close`, called as deletion begins,
    waits for a post under way, and no post starts after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = True

    def close(self) -> None:
        with self._lock:
            self._open = False

    def post(self, relay: GuiRelay, call: Callable[[], None]) -> None:
        with self._lock:
            if self._open:
                relay.post(_run, call)


def _owner_gone(gate: _Gate, cancel: threading.Event, ended: threading.Event, *_: object) -> None:
    gate.close()
    if not ended.is_set():  # a job still running stops; one that has ended stays as it ended
        cancel.set()


def _run(call: Callable[[], None]) -> None:
    call()


def _said(error: BaseException) -> str:
    return str(error).strip() or type(error).__name__


def _call[T](callback: Callable[[T], object], value: T) -> None:
    try:
        callback(value)
    except Exception:  # a failing callback must be seen, and must not stop the next one
        _log.exception("A callback of an operation failed")


class Operation[R, P]:
    """One job, started once: `R` is its result, `P` what it reports as progress.

    Make it on the GUI thread with the object that waits for it as `owner` (a dialog, the
    window's part that started it); register callbacks, then `start()`.
    """

    def __init__(
        self,
        owner: QObject,
        description: str,
        job: Callable[[JobContext[P]], R],
        *,
        expected: tuple[type[BaseException], ...] = (),
        changes: Callable[[R], Changes] | None = None,
        runs_on: Launcher = in_thread,
        notifier: ChangeNotifier | None = None,
    ) -> None:
        """`description` names the work for the person ("Importing chats"); `expected` are the
        exceptions whose text is written for the person; `changes(result)`, run on the job's
        thread, says what a success changed; `notifier` (the app's when None) hears it."""
        self.description = description
        self._job = job
        self._expected = expected
        self._changes = changes
        self._runs_on = runs_on
        # Looked up here, on the GUI thread: the app's notifier is made where it is first asked.
        self._notifier = notifier or app_changes()
        self._cancel = threading.Event()
        self._ended = threading.Event()
        self._started = False
        self._progress: list[Callable[[P], object]] = []
        self._success: list[Callable[[R], object]] = []
        self._failure: list[Callable[[Failure], object]] = []
        self._gate = _Gate()
        # A child of the owner: deleting the owner deletes the relay, and nothing more arrives.
        self._relay = GuiRelay(owner)
        self._relay.destroyed.connect(
            functools.partial(_owner_gone, self._gate, self._cancel, self._ended)
        )

    # -- on the GUI thread ------------------------------------------------------------------

    def on_progress(self, callback: Callable[[P], object]) -> Self:
        self._progress.append(callback)
        return self

    def on_success(self, callback: Callable[[R], object]) -> Self:
        self._success.append(callback)
        return self

    def on_failure(self, callback: Callable[[Failure], object]) -> Self:
        self._failure.append(callback)
        return self

    def start(self) -> Self:
        if self._started:
            raise RuntimeError(f"{self.description}: an operation runs once; make another")
        self._started = True
        self._runs_on(f"operation: {self.description}", self._run)
        return self

    def cancel(self) -> None:
        """Ask the job to stop at its next look; it still ends with a result or a failure."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        return self._started and not self._ended.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the job has ended (its result may still be on its way to the
        callbacks); True if it did within `timeout_s`."""
        return self._ended.wait(timeout_s)

    def _deliver_progress(self, progress: P) -> None:
        for callback in self._progress:
            _call(callback, progress)

    def _succeed(self, result: R) -> None:
        for callback in self._success:
            _call(callback, result)
        self._retire()

    def _fail(self, failure: Failure) -> None:
        for callback in self._failure:
            _call(callback, failure)
        self._retire()

    def _retire(self) -> None:
        """After the last delivery the relay goes, rather than living on as a child of its
        owner (the window, for some) as long as the owner does."""
        self._gate.close()
        self._relay.deleteLater()

    # -- on the job's thread ----------------------------------------------------------------

    def _post(self, call: Callable[[], None]) -> None:
        self._gate.post(self._relay, call)

    def _run(self) -> None:
        context = JobContext[P](self._cancel, self._report)
        try:
            result = self._job(context)
        except Exception as error:
            self._post(functools.partial(self._fail, self._failure_of(error)))
        else:
            self._announce(result)
            self._post(functools.partial(self._succeed, result))
        finally:
            self._ended.set()

    def _announce(self, result: R) -> None:
        """Tell the views what the job changed, ahead of the success callbacks, and even when
        the owner has gone meanwhile: what was written is shown all the same."""
        if self._changes is None:
            return
        try:
            changes = self._changes(result)
        except Exception:  # the result still reaches its callbacks
            _log.exception("%s: what changed could not be said", self.description)
            return
        self._notifier.post(changes)

    def _report(self, progress: P) -> None:
        self._post(functools.partial(self._deliver_progress, progress))

    def _failure_of(self, error: Exception) -> Failure:
        expected = isinstance(error, self._expected)
        if isinstance(error, OperationCancelled) or (expected and self._cancel.is_set()):
            return Failure(FailureKind.CANCELLED, _said(error), error)
        if expected:
            return Failure(FailureKind.REFUSED, _said(error), error)
        _log.error("%s stopped on an unexpected error", self.description, exc_info=error)
        return Failure(
            FailureKind.BUG, f"{self.description} stopped on an unexpected error: {error!r}", error
        )
