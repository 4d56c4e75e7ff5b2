"""What the Knowledge page says of a folder's state: which `ShownState` it is in (from the index's
record of it, whether its folder is there now, and what the app's index runs are doing with it),
the line that says so, and how far a run under way is.

    Indexing · 120 of 3,000 files · 14 failed · about 2 min left
    Paused while a reply is generating · 120 of 3,000 files read
    Offline: the folder is not there (an unplugged disk?); its index is kept
"""

from __future__ import annotations

import time
from enum import Enum
from typing import TYPE_CHECKING

from app.knowledge.records import CollectionState, IndexPhase, IndexProgress
from app.operations.knowledge_activity import FolderActivity, RunEnd

if TYPE_CHECKING:
    from app.operations.knowledge_overview import FolderOverview


class ShownState(Enum):
    REMOVING = "removing"
    INDEXING = "indexing"
    PAUSED = "paused"  # the run waits while a reply generates
    WAITING = "waiting"  # for another folder's run
    OFFLINE = "offline"
    CANCELLED = "cancelled"
    FAILED = "failed"  # the last run stopped on an error
    UP_TO_DATE = "up to date"
    STOPPED = "stopped"  # a run ended before it finished (the app quit): the next goes on
    NEW = "new"  # never indexed yet


# Short words for the folder list; the detail says more.
SHORT = {
    ShownState.REMOVING: "Removing its index",
    ShownState.INDEXING: "Indexing",
    ShownState.PAUSED: "Paused for a reply",
    ShownState.WAITING: "Waiting its turn",
    ShownState.OFFLINE: "Offline",
    ShownState.CANCELLED: "Cancelled",
    ShownState.FAILED: "Indexing failed",
    ShownState.UP_TO_DATE: "Up to date",
    ShownState.STOPPED: "Not finished",
    ShownState.NEW: "Not indexed yet",
}
# States the page marks as needing the person's eye.
WARNINGS = frozenset({ShownState.OFFLINE, ShownState.FAILED, ShownState.CANCELLED})


def shown_state(folder: FolderOverview, activity: FolderActivity) -> ShownState:
    if activity.removing:
        return ShownState.REMOVING
    if activity.running:
        progress = activity.progress
        return (
            ShownState.PAUSED if progress is not None and progress.paused else ShownState.INDEXING
        )
    if activity.waiting:
        return ShownState.WAITING
    if not folder.online or folder.status.collection.state is CollectionState.OFFLINE:
        return ShownState.OFFLINE
    last = activity.last
    if activity.held or (last is not None and last.end is RunEnd.CANCELLED):
        return ShownState.CANCELLED
    if last is not None and last.end is RunEnd.FAILED:
        return ShownState.FAILED
    state = folder.status.collection.state
    if last is not None and last.report is not None and state is not CollectionState.READY:
        # The run just ended; the index's figures have not been read again since.
        state = last.report.state
    return {
        CollectionState.READY: ShownState.UP_TO_DATE,
        CollectionState.INDEXING: ShownState.STOPPED,
        CollectionState.NEW: ShownState.NEW,
        CollectionState.OFFLINE: ShownState.OFFLINE,
    }[state]


def time_left(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return "under a minute left"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60:02d} min left"


def progress_line(progress: IndexProgress) -> str:
    """How far a run is, e.g. "120 of 3,000 files · 1,804 chunks · 2 failed"."""
    if progress.phase is IndexPhase.SCANNING:
        return "Listing the folder's files"
    if progress.phase is IndexPhase.EMBEDDING:
        parts = [f"Vectors for {progress.embedded:,} of {progress.to_embed:,} chunks"]
    else:
        parts = [f"{progress.files_done:,} of {progress.files_total:,} files"]
        if progress.chunks:
            parts.append(f"{progress.chunks:,} chunks")
    if progress.failures:
        parts.append(f"{progress.failures:,} failed")
    return " · ".join(parts)


def progress_fraction(progress: IndexProgress | None) -> tuple[int, int]:
    """(done, total) for a progress bar; (0, 0) when the run cannot tell yet."""
    if progress is None or progress.phase is IndexPhase.SCANNING:
        return 0, 0
    if progress.phase is IndexPhase.EMBEDDING:
        return progress.embedded, progress.to_embed
    if progress.phase is IndexPhase.DONE:
        return 1, 1
    return progress.files_done, progress.files_total


def state_line(
    state: ShownState, folder: FolderOverview, activity: FolderActivity, waiting_for: str | None
) -> str:
    """The detail's sentence on the folder's state."""
    progress = activity.progress
    if state is ShownState.INDEXING:
        if progress is None:
            return "Indexing"
        line = f"Indexing · {progress_line(progress)}"
        left = time_left(progress.seconds_left)
        return f"{line} · {left}" if left else line
    if state is ShownState.PAUSED:
        read = f" · {progress_line(progress)}" if progress is not None else ""
        return f"Paused while a reply is generating{read}; it goes on when the reply ends"
    if state is ShownState.REMOVING:
        return "Removing its index (your files stay as they are)"
    if state is ShownState.WAITING:
        after = f"“{waiting_for}”" if waiting_for else "another folder"
        return f"Waiting to be indexed after {after}"
    if state is ShownState.OFFLINE:
        return "Offline: the folder is not there (an unplugged disk?). Its index is kept."
    if state is ShownState.CANCELLED:
        return (
            "Indexing was cancelled; the files read so far stay indexed. "
            "Re-index goes on from there."
        )
    if state is ShownState.FAILED:
        last = activity.last
        reason = last.message if last is not None and last.message else "an unknown error"
        return f"Indexing stopped: {reason}"
    if state is ShownState.UP_TO_DATE:
        synced = folder.status.collection.synced_at
        return f"Up to date · indexed {ago(synced)}" if synced else "Up to date"
    if state is ShownState.STOPPED:
        return "Indexing did not finish; it goes on at the next rescan (or Re-index now)."
    return "Not indexed yet"


def ago(when: float, now: float | None = None) -> str:
    seconds = max(0.0, (time.time() if now is None else now) - when)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return time.strftime("on %d %b %Y", time.localtime(when))
