"""A gate background indexing passes between files (and between batches of vectors): closed
while a reply is generating, so the chat never shares the machine with an index run.

Whoever generates holds the gate (`hold(key)`) for as long as it does and releases it after
(`release(key)`); any number may hold it at once, each by its own key (a request id), and the
gate opens when the last lets go. `app.operations.knowledge.pause_while_generating` wires it to
the inference worker's signals; `app_pause_gate()` is the one the app's index runs wait on.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Hashable
from typing import Protocol

# How often a paused run looks at its cancel flag.
_CANCEL_POLL_S = 0.1


class CancelFlag(Protocol):
    """What an index run looks at to know it must stop: a `threading.Event`, or a
    `multiprocessing` one in an index run's child process."""

    def is_set(self) -> bool: ...


class Gate(Protocol):
    """What an index run waits at: `PauseGate`, or its mirror in a child process."""

    @property
    def paused(self) -> bool: ...

    def wait(self, cancel: CancelFlag) -> float: ...


class PauseGate:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._holders: set[Hashable] = set()

    def hold(self, key: Hashable) -> None:
        with self._changed:
            self._holders.add(key)

    def release(self, key: Hashable) -> None:
        """Let go of `key` (one never held is ignored: a request that failed before it began)."""
        with self._changed:
            self._holders.discard(key)
            self._changed.notify_all()

    @property
    def paused(self) -> bool:
        with self._changed:
            return bool(self._holders)

    def wait(self, cancel: CancelFlag) -> float:
        """Return once the gate is open or `cancel` is set; the seconds it waited."""
        started = time.monotonic()
        with self._changed:
            while self._holders and not cancel.is_set():
                self._changed.wait(_CANCEL_POLL_S)
        return time.monotonic() - started


@functools.cache
def app_pause_gate() -> PauseGate:
    """The app's one gate: the worker's generations hold it, the app's index runs wait on it."""
    return PauseGate()
