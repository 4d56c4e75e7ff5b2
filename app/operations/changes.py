"""What an operation changed, announced once on the GUI thread through one app-wide notifier.
Each view that shows such things subscribes and refreshes itself from the `Changes` it is told,
so the code that starts an operation never has to know which views to tell (in the spirit of
Anki's `OpChanges` and its `operation_did_execute` hook).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal, Slot

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed; a view reads the parts it shows and ignores the rest."""

    # Conversations whose messages changed or that went away: an open one is shown anew.
    conversations: frozenset[int] = frozenset()
    # Conversations added, removed or renamed: lists of conversations list them again.
    conversation_list: bool = False
    # Models added, removed or renamed in the library folder.
    model_library: bool = False
    # Knowledge folders added, removed or indexed.
    knowledge: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.conversations or self.conversation_list or self.model_library or self.knowledge
        )


class _Subscription(QObject):
    """One subscriber's callback, as a child of its owner: Qt drops the connection when the
    owner (and so this) is deleted, so no view hears of changes after it is gone."""

    def __init__(self, owner: QObject, callback: Callable[[Changes], object]) -> None:
        super().__init__(owner)
        self._callback = callback

    @Slot(object)
    def receive(self, changes: Changes) -> None:
        try:
            self._callback(changes)
        except Exception:  # one view's bug must be seen, and must not keep the others stale
            _log.exception("A view failed to refresh after %s", changes)


class ChangeNotifier(QObject):
    """Announces `Changes` to every subscriber, on the GUI thread, in the order they
    subscribed."""

    _announced = Signal(Changes)
    _posted = Signal(Changes)  # from any thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._posted.connect(self.announce, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def announce(self, changes: Changes) -> None:
        """Call on the GUI thread: every subscriber runs before this returns."""
        if not changes.empty:
            self._announced.emit(changes)

    def post(self, changes: Changes) -> None:
        """From any thread: announced on the GUI thread once its event loop gets there, ahead
        of anything the same thread posts after it."""
        if not changes.empty:
            self._posted.emit(changes)

    def subscribe(self, owner: QObject, callback: Callable[[Changes], object]) -> None:
        """`callback(changes)` after each announcement, for as long as `owner` lives."""
        self._announced.connect(_Subscription(owner, callback).receive)


@functools.cache
def app_changes() -> ChangeNotifier:
    """The app's one notifier. Made on first use, which is on the GUI thread (a view
    subscribing, or an operation announcing), so it lives there."""
    return ChangeNotifier()
