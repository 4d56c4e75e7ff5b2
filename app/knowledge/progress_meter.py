"""How far an index run is, reported a few times a second at most (a folder of small files
would otherwise send the window thousands of updates a second), with the time left estimated
from the bytes read (or chunks embedded) per second of work, time spent paused left out."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.knowledge.records import IndexPhase, IndexProgress

REPORT_INTERVAL_S = 0.1


class ProgressMeter:
    """The run sets the counters as it goes and calls `tick`; what is reported is built from
    them."""

    def __init__(
        self,
        collection: str,
        report: Callable[[IndexProgress], None] | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._collection = collection
        self._report = report
        self._clock = clock
        self._last = -REPORT_INTERVAL_S
        self.phase = IndexPhase.SCANNING
        self.files_done = self.files_total = self.chunks = self.failures = 0
        self.embedded = self.to_embed = 0
        self.current = ""
        self.paused = False
        self._phase_started = clock()
        self._paused_s = 0.0
        self._work_done = self._work_total = 0.0

    def start_phase(self, phase: IndexPhase, total_work: float) -> None:
        """A new phase: `total_work` is what it has to do (bytes to read, chunks to embed)."""
        self.phase = phase
        self._phase_started = self._clock()
        self._paused_s = 0.0
        self._work_done, self._work_total = 0.0, total_work
        self.current = ""
        self.tick(force=True)

    def waited(self, seconds: float) -> None:
        """The run waited `seconds` at the pause gate: not work time."""
        self._paused_s += seconds

    def worked(self, amount: float) -> None:
        self._work_done += amount

    def tick(self, force: bool = False) -> None:
        now = self._clock()
        if self._report is not None and (force or now - self._last >= REPORT_INTERVAL_S):
            self._last = now
            self._report(self.snapshot(now))

    def snapshot(self, now: float | None = None) -> IndexProgress:
        return IndexProgress(
            self._collection,
            self.phase,
            self.files_done,
            self.files_total,
            self.chunks,
            self.failures,
            self.embedded,
            self.to_embed,
            self.current,
            self.paused,
            self._seconds_left(self._clock() if now is None else now),
        )

    def _seconds_left(self, now: float) -> float | None:
        if self.phase is IndexPhase.DONE:
            return 0.0
        worked = now - self._phase_started - self._paused_s
        if self._work_done <= 0 or worked <= 0 or self._work_total <= 0:
            return None
        return max(0.0, (self._work_total - self._work_done) * worked / self._work_done)
