"""Knowledge folders as the window handles them: the Knowledge page (File › Knowledge…, made on
first use and kept, so it opens again where it was), a line in the status bar while a folder is
being indexed (a click opens the page), and a notice when an index run fails while the page is
closed.

The indexing itself belongs to the app (`KnowledgeActivity`, made at start-up in `ui.main`):
it goes on whether the page is open or not, and stops when the window closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QPushButton

from app.operations.knowledge_activity import KnowledgeActivity
from app.operations.knowledge_folders import KnowledgeFailure
from ui.knowledge.folder_state import progress_fraction
from ui.text.plain_text import menu_text
from ui.window.window_host import ChatWindow

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from app.paths import AppPaths
    from app.settings import Preferences
    from ui.knowledge.knowledge_page import KnowledgePage

# Folders are indexed at start once the window is up and the model has begun to load.
START_DELAY_MS = 3000


class KnowledgePageHost(ChatWindow, Protocol):
    paths: AppPaths
    preferences: Preferences

    def statusBar(self) -> QStatusBar: ...


class KnowledgeCommands(QObject):
    def __init__(self, window: KnowledgePageHost, activity: KnowledgeActivity) -> None:
        super().__init__(window.window())
        self._window = window
        self.activity = activity
        self.page: KnowledgePage | None = None  # made on first use
        self.indicator = QPushButton()
        self.indicator.setObjectName("KnowledgeIndicator")
        self.indicator.setFlat(True)
        self.indicator.setCursor(Qt.CursorShape.PointingHandCursor)
        self.indicator.setToolTip("Knowledge is being indexed; click to see the Knowledge page")
        self.indicator.clicked.connect(self.open_page)
        self.indicator.hide()
        window.statusBar().addPermanentWidget(self.indicator)
        activity.changed.connect(self._show_indexing)
        activity.runFailed.connect(self._on_run_failed)

    def start(self) -> None:
        """Index every folder (what changed since last time) and keep them current."""
        self.activity.folders.start()

    def stop(self) -> None:
        """No more runs; the one under way stops after its file (what it read stays)."""
        self.activity.folders.stop()

    def open_page(self) -> KnowledgePage:
        from ui.knowledge.knowledge_page import KnowledgePage

        if self.page is None:
            window = self._window
            self.page = KnowledgePage(
                self.activity, window.paths.models_dir, window.preferences, window.window()
            )
        else:
            self.page.refresh()
        self.page.show()
        self.page.raise_()
        self.page.activateWindow()
        return self.page

    def _show_indexing(self, _name: str) -> None:
        running = self.activity.folders.running
        activity = self.activity.of(running) if running else None
        if activity is None or activity.removing:
            self.indicator.hide()
            return
        progress = activity.progress
        done, total = progress_fraction(progress)
        text = f"Indexing {running}"
        if progress is not None and progress.paused:
            text += " · paused"
        elif total:
            text += f" · {round(100 * done / total)}%"
        self.indicator.setText(menu_text(text))
        self.indicator.show()

    def _on_run_failed(self, failure: KnowledgeFailure) -> None:
        if self.page is not None and self.page.isVisible():
            return  # the page says so itself
        what = f"“{failure.collection}” could not be indexed" if failure.collection else "Knowledge"
        self._window.show_notice(f"{what}: {failure.message} (File › Knowledge… has the details)")
