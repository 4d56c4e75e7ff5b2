"""Python's cycle collector, run on the GUI thread only.

CPython collects reference cycles in whichever thread happens to allocate when a generation's
threshold is crossed: in Branchwise that is often the inference worker or an executor thread.
A collected cycle that holds a Qt object (a dialog, a timer, a relay) then destroys it on the
wrong thread: Qt warns "Timers cannot be stopped from another thread" and may crash (seen in
the test suite: a segmentation fault while the worker streamed). So automatic collection is
switched off and the GUI thread collects instead, on a timer, with the thresholds CPython
itself would use.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 500


class GuiThreadCollector(QObject):
    """Owns cycle collection while it lives: create it on the GUI thread once the application
    exists; `stop` hands collection back to CPython."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(interval_ms)

    def collect_due(self) -> int:
        """Collect the generations whose allocation counts passed their thresholds, youngest
        first as CPython does; returns the number of objects found unreachable."""
        found = 0
        for generation, (count, threshold) in enumerate(
            zip(gc.get_count(), self._thresholds, strict=True)
        ):
            if count <= threshold:
                break
            found = gc.collect(generation)
        return found

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()


def collect_on_gui_thread(app: QCoreApplication) -> GuiThreadCollector:
    """The application's collector, made on first call (launching twice in one process, as the
    tests do, keeps one)."""
    collector = app.findChild(GuiThreadCollector)
    return collector if collector is not None else GuiThreadCollector(app)
