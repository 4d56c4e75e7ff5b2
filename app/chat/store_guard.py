"""A store action whose refusal becomes a notice for the person instead of a crash: the chat
controller's parts run every change they make to the store through `guarded`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import SignalInstance

from app.store.conversations import StoreError


def guarded[T](notice: SignalInstance, action: Callable[[], T]) -> T | None:
    """`action()`, or None once `notice` has said why the store refused it."""
    try:
        return action()
    except StoreError as exc:
        notice.emit(str(exc))
        return None
