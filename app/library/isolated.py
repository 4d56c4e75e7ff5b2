"""Run one model-file job in a child process, so a file that crashes or hangs a native reader
costs that job, not the app.

Model files come from anywhere, and the readers that parse them (MLX's GGUF and safetensors
loaders, the tokenizers library) are native code: a hostile header can make them crash the
whole process, and the app's window with it. `run_isolated` starts a fresh interpreter
(multiprocessing's "spawn", the one start method that is safe in a process with threads and that
works in the frozen app, where `multiprocessing.freeze_support()` at the top of the entry point
turns the child's start into a call of the job), runs the job there, relays its progress, and
turns every way it can end into a value or an exception with a message for the person: an error
the job raised, the child dying by a signal, cancel, or a time limit.

The job is named as "module:function" and imported only in the child, so the app never loads
MLX for it. Its arguments and result must be plain, picklable values.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from enum import Enum, auto
from multiprocessing.connection import Connection, wait
from typing import Any

Progress = Callable[[int, int], None]

_POLL_S = 0.05


class _Sent(Enum):
    """What the child says, first in each message it sends back (the rest, after it)."""

    PROGRESS = auto()  # done, total
    DONE = auto()  # the job's result
    FAILED = auto()  # why the job failed, for the person


def run_isolated(
    job: str,
    *args: Any,
    label: str,
    failure: type[Exception],
    cancelled: type[Exception],
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
) -> Any:
    """Call the function `job` ("package.module:function") with `args` in a child process.

    With `progress`, the job is also given `progress=` and its calls reach `progress` here.
    Returns the job's result. Raises `failure(message)` when the job raises (its message), when
    the child dies (naming `label`, the file, and the signal) or runs past `timeout_s`, and
    `cancelled(...)` when `cancel` is set; the child is killed on the way out in every case.
    """
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child_main,
        args=(sender, job, args, progress is not None),
        name=f"Branchwise check: {label}",
        daemon=True,
    )
    child.start()
    sender.close()  # the child holds the other copy: end of input means the child is gone
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise cancelled("The import was cancelled.")
            if deadline is not None and time.monotonic() > deadline:
                raise failure(
                    f"Checking {label} took longer than {timeout_s:.0f} seconds and was stopped; "
                    "the file is damaged or hostile. Nothing was added."
                )
            if not receiver.poll(_POLL_S):
                continue
            try:
                kind, *values = receiver.recv()
            except EOFError:
                child.join()
                raise failure(_death(label, child.exitcode)) from None
            if kind is _Sent.PROGRESS and progress is not None:
                progress(*values)
            elif kind is _Sent.DONE:
                return values[0]
            elif kind is _Sent.FAILED:
                raise failure(values[0])
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        child.close()
        receiver.close()


def _death(label: str, exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            cause = "was stopped by the system (out of memory?)"
        else:
            cause = f"crashed ({name})"
        return (
            f"Reading {label} {cause}. The file is damaged or is not a model file; nothing was "
            "added, and Branchwise is unaffected."
        )
    return f"Reading {label} stopped unexpectedly (exit code {exitcode}); nothing was added."


def _child_main(sender: Connection, job: str, args: tuple[Any, ...], relay: bool) -> None:
    """The child's whole life: run the job, send back its result or its error, exit."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()
    try:
        module, _, name = job.partition(":")
        function = getattr(importlib.import_module(module), name)

        def progress(done: int, total: int) -> None:
            sender.send((_Sent.PROGRESS, done, total))

        result = function(*args, progress=progress) if relay else function(*args)
        sender.send((_Sent.DONE, result))
    except BaseException as error:  # the child's one duty is to say why it failed
        sender.send((_Sent.FAILED, _message(error)))
    finally:
        sender.close()


def _exit_with(parent_sentinel: int) -> None:
    """End the child as soon as the app does: a quit mid-import leaves the app with os._exit,
    which kills no children, and an orphaned import would go on writing into the models folder
    that the next start cleans up."""
    wait([parent_sentinel])
    os._exit(1)


def _message(error: BaseException) -> str:
    """The job's own message for errors written for people; the type too for anything else
    (a KeyError's message alone is just a key)."""
    text = str(error).strip()
    if type(error).__module__ == "builtins" or not isinstance(error, Exception) or not text:
        return f"{type(error).__name__}: {text}" if text else type(error).__name__
    return text
