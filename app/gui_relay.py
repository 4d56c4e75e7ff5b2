"""Runs callbacks on the GUI thread for code that finishes its work on another thread.

A background thread must not write GUI-side state (the controller, the window) itself: Qt
objects and the controller's fields are not guarded by locks. It posts `(callback, value)`
through one queued signal instead, and the relay, created on (and so living on) the GUI thread,
runs the callback there in the order posted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

_log = logging.getLogger(__name__)


class GuiRelay(QObject):
    """Create on the GUI thread; `post` from any thread."""

    _posted = Signal(object)  # (callback, value)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Queued even when posted from the GUI thread itself, so a callback never runs inside
        # the caller's stack frame.
        self._posted.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def post(self, callback: Callable[[Any], object], value: Any) -> None:
        """Run `callback(value)` on the relay's thread once its event loop gets there."""
        self._posted.emit((callback, value))

    def wrap(self, callback: Callable[..., object]) -> Callable[..., None]:
        """`callback` as a function any thread may call: each call is posted, arguments and all."""

        def posted(*args: Any) -> None:
            self.post(_spread(callback), args)

        return posted

    @Slot(object)
    def _deliver(self, item: tuple[Callable[[Any], object], Any]) -> None:
        callback, value = item
        try:
            callback(value)
        except Exception:  # a failing callback must be seen, and must not stop the next one
            _log.exception("A callback from a background task failed")


def _spread(callback: Callable[..., object]) -> Callable[[tuple], object]:
    return lambda args: callback(*args)
