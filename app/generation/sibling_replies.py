"""Several sibling replies to one message, written into the store side by side as they stream:
what Regenerate ×N (`app.generation.variant_generation`) and Compare
(`app.generation.compare_generation`) share.

Each reply is begun empty as a sibling under the same parent (so `‹ k/n ›` steps through them
afterwards), has its own `ReplyWriter` (written at least once a second) and its own stop.
Whatever happens — a stop, a failure, closing the window — what was generated is kept, and a
reply that did not end by itself is marked "stopped". `keep(index)` makes one the active branch.
The payloads are frozen dataclasses; a subclass emits its own `started`, saying what its columns
are (seeds, models).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal

from app.store.compaction_records import summary_stats
from app.store.conversations import Store, StoreError
from app.store.records import Status
from app.store.reply_writer import ReplyWriter


@dataclass(frozen=True)
class SiblingText:
    """Reply `index` of the run, its whole text so far."""

    index: int
    message_id: int
    text: str


@dataclass(frozen=True)
class SiblingEnd:
    """Reply `index` ended: "complete", "stopped" or "error" (then `error` says why)."""

    index: int
    message_id: int
    status: str
    stats: Mapping[str, Any] | None
    error: str | None = None


@dataclass
class Sibling:
    message_id: int
    writer: ReplyWriter
    cancel: threading.Event = field(default_factory=threading.Event)
    done: bool = False


@dataclass
class SiblingRun:
    conversation_id: int
    siblings: list[Sibling]


class SiblingReplies(QObject):
    replyUpdated = Signal(SiblingText)
    replyFinished = Signal(SiblingEnd)
    busyChanged = Signal(bool)
    ended = Signal(int)  # the conversation whose replies are all finished (or one was kept)
    notice = Signal(str)

    def __init__(self, store: Store, posted_via: QObject | None, parent: QObject | None) -> None:
        """`posted_via`: the object the replies' updates are queued to (the worker's relay;
        None: this object), delivered at shutdown before the unfinished ones are saved."""
        super().__init__(parent)
        self.store = store
        self._posted_via = posted_via
        self._run: SiblingRun | None = None
        self._last: SiblingRun | None = None  # the run finished last, for `keep` afterwards
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(1000)
        self._flush_timer.timeout.connect(self._flush)

    def is_busy(self) -> bool:
        return self._run is not None

    def conversation_id(self) -> int | None:
        """The conversation of the run in progress."""
        return None if self._run is None else self._run.conversation_id

    def message_ids(self) -> list[int]:
        return [] if self._run is None else [s.message_id for s in self._run.siblings]

    def stop(self, index: int | None = None) -> None:
        """Stop one reply (or all): its text so far is kept, marked as stopped."""
        if self._run is None:
            return
        for i, sibling in enumerate(self._run.siblings):
            if index in (None, i) and not sibling.done:
                sibling.cancel.set()
                self._stopping(i)

    def keep(self, index: int) -> int | None:
        """Make reply `index` (of the run in progress or the last one) the active branch."""
        run = self._run or self._last
        if run is None:
            return None
        message_id = run.siblings[index].message_id
        try:
            self.store.switch_to_sibling(message_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return None
        self._kept(run, index)
        self.ended.emit(run.conversation_id)
        return message_id

    def save_after_shutdown(self) -> None:
        """Once the worker has stopped: deliver its last results still queued for the GUI thread
        (the event loop will not run again), then keep each unfinished reply's text, marked
        stopped."""
        QCoreApplication.sendPostedEvents(self._posted_via or self, QEvent.Type.MetaCall)
        run = self._run
        if run is not None:
            for sibling in run.siblings:
                if not sibling.done:
                    self._write_end(sibling, "stopped", None)
        self._end()

    # -- for the subclasses ----------------------------------------------------------------

    def _stopping(self, index: int) -> None:
        """Reply `index` was asked to stop (its cancel event is set): a backend that stops
        otherwise is told here."""

    def _kept(self, run: SiblingRun, index: int) -> None:
        """Reply `index` of `run` became the active branch."""

    def _begin(self, conversation_id: int, siblings: list[Sibling]) -> SiblingRun:
        run = SiblingRun(conversation_id, siblings)
        self._run = run
        self._flush_timer.start()
        self.busyChanged.emit(True)
        return run

    def _on_text(self, run: SiblingRun, index: int, text: str, reasoning: str = "") -> None:
        sibling = run.siblings[index]
        if sibling.done:
            return
        try:
            sibling.writer.append(text, reasoning)
        except StoreError as exc:
            self.notice.emit(f"A reply could not be saved: {exc}")
            return
        self.replyUpdated.emit(SiblingText(index, sibling.message_id, sibling.writer.text))

    def _finish(
        self, run: SiblingRun, index: int, status: Status, stats: dict | None, **kw: Any
    ) -> None:
        """End reply `index` (once): written with its status, told, and the run ended once
        every reply has."""
        sibling = run.siblings[index]
        if sibling.done:
            return
        self._write_end(sibling, status, stats, **kw)
        self.replyFinished.emit(
            SiblingEnd(index, sibling.message_id, status, stats, kw.get("error"))
        )
        if run is self._run and all(s.done for s in run.siblings):
            self._end()

    def _fail_rest(self, run: SiblingRun, message: str) -> None:
        """Every reply still open ends as an error saying `message` (their text is kept)."""
        for index, sibling in enumerate(run.siblings):
            if not sibling.done:
                self._finish(run, index, "error", None, error=message)

    def _write_end(self, sibling: Sibling, status: Status, stats: dict | None, **kw: Any) -> None:
        sibling.done = True
        if stats is not None:  # on a compacted branch: the earlier tokens its summary stands for
            with contextlib.suppress(StoreError):
                stats = {**stats, **summary_stats(self.store.path_to(sibling.message_id)[:-1])}
        try:
            sibling.writer.finish(status, stats=stats, **kw)
        except StoreError as exc:
            self.notice.emit(f"A reply could not be saved: {exc}")

    def _flush(self) -> None:
        if self._run is None:
            return
        for sibling in self._run.siblings:
            if not sibling.done:
                # A refused write stays in the writer; the finish writes it.
                with contextlib.suppress(StoreError):
                    sibling.writer.flush()

    def _end(self) -> None:
        run = self._run
        if run is None:
            return
        self._last, self._run = run, None
        self._flush_timer.stop()
        self.busyChanged.emit(False)
        self.ended.emit(run.conversation_id)
