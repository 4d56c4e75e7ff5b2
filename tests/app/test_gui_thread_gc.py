"""Reference cycles holding Qt objects are collected on the GUI thread, never on a worker thread
that happens to allocate (which made Qt warn "Timers cannot be stopped from another thread" and
once crashed the test run while the inference worker streamed)."""

from __future__ import annotations

import gc
import threading
from typing import Any

from PySide6.QtCore import QObject, QTimer

from app.gui_thread_gc import GuiThreadCollector, collect_on_gui_thread


class _Panel(QObject):
    """A window part; with a running timer, as the app's presenters have."""

    def __init__(self, died_on: list[int], timer: bool) -> None:
        super().__init__()
        self.died_on = died_on
        if timer:
            self.timer = QTimer(self)
            self.timer.start(60_000)

    def __del__(self) -> None:
        self.died_on.append(threading.get_ident())


def _qobject_in_a_cycle(died_on: list[int], timer: bool = True) -> None:
    panel = _Panel(died_on, timer)
    panel.myself = panel  # only the cycle collector can free it now


def _allocate_on_a_worker_thread() -> None:
    def churn() -> None:
        kept = [[] for _ in range(20 * gc.get_threshold()[0])]
        del kept

    thread = threading.Thread(target=churn)
    thread.start()
    thread.join()


def test_without_the_collector_a_worker_thread_frees_the_qt_object(qapp: Any) -> None:
    """The hazard itself, so the next test means something. Without a timer: a timer freed on
    the wrong thread stays registered with the GUI thread and crashes it when it next fires."""
    died_on: list[int] = []
    gc.enable()
    try:
        gc.collect()
        _qobject_in_a_cycle(died_on, timer=False)
        _allocate_on_a_worker_thread()
    finally:
        gc.disable()
    assert died_on and died_on[0] != threading.get_ident()


def test_with_the_collector_the_gui_thread_frees_it(qapp: Any) -> None:
    gc.enable()
    collector = GuiThreadCollector(interval_ms=60_000)
    try:
        assert not gc.isenabled()
        died_on: list[int] = []
        _qobject_in_a_cycle(died_on)
        _allocate_on_a_worker_thread()
        assert died_on == []
        for _ in range(3):  # the young generation first, then older ones as CPython would
            collector.collect_due()
            gc.collect()
        assert died_on == [threading.get_ident()]
    finally:
        collector.stop()
        assert gc.isenabled()
        gc.disable()
        collector.deleteLater()


def test_the_application_has_one_collector(qapp: Any) -> None:
    first = collect_on_gui_thread(qapp)
    try:
        assert collect_on_gui_thread(qapp) is first
        assert qapp.findChildren(GuiThreadCollector) == [first]
    finally:
        first.stop()
        gc.disable()
        first.setParent(None)
