"""Regenerate ×N, Compare Versions and the Branch Map, wired into the window.

Adds to the Chat menu "Regenerate ×2/×3/×4" (×3 also on Ctrl+Alt+R) and "Compare Versions…"
(Ctrl+Alt+D), to the View menu "Branch Map" (Ctrl+Alt+B, a dock that can stay open), and a menu
on each reply's regenerate button. The variants view opens when a run starts and follows it;
switching conversation mid-way stops the run (what was generated is kept, marked stopped). The
branch map refreshes whenever the open conversation changes, while it is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from app.chat.branch_map_source import BranchMapSource, BranchOutline, BranchStates
from app.generation.variant_generation import MAX_VARIANTS, MIN_VARIANTS, VariantsStarted
from app.store.conversations import StoreError
from ui.chat.branch_map import BranchMapDock
from ui.chat.columns_view import ColumnHeading, ColumnsView
from ui.chat.message_widget import MessageWidget
from ui.chat.sibling_diff import SiblingDiffDialog
from ui.window.window_host import ChatPane, MenuWindow

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget

    from ui.window.branch_commands import BranchCommands

DEFAULT_VARIANTS = 3


class CompareHost(ChatPane, MenuWindow, Protocol):
    """The window as Compare and the Branch Map use it."""

    branches: BranchCommands

    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget, /) -> None: ...


class CompareFeatures(QObject):
    def __init__(self, window: CompareHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._controller = window.controller
        self._variants = window.controller.variants
        self.view: ColumnsView | None = None
        self.diff: SiblingDiffDialog | None = None
        self.regenerate_menu = QMenu("Regenerate &Versions", window.window())
        self.regenerate_menu.setToolTipsVisible(True)
        for n in range(MIN_VARIANTS, MAX_VARIANTS + 1):
            action = QAction(f"Regenerate ×{n} Side by Side", window.window())
            if n == DEFAULT_VARIANTS:
                action.setShortcut(QKeySequence("Ctrl+Alt+R"))
            action.triggered.connect(lambda _=False, n=n: self.regenerate_last(n))
            window.addAction(action)
            self.regenerate_menu.addAction(action)
        self.compare_action = QAction("&Compare Versions…", window.window())
        self.compare_action.setShortcut(QKeySequence("Ctrl+Alt+D"))
        self.compare_action.triggered.connect(self.compare_focused)
        window.addAction(self.compare_action)
        self.dock = BranchMapDock(window.window())
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()
        self.map_action = self.dock.toggleViewAction()
        self.map_action.setText("Branch &Map")
        self.map_action.setShortcut(QKeySequence("Ctrl+Alt+B"))
        window.addAction(self.map_action)
        self._add_to_menus()
        self.source = BranchMapSource(
            window.store, window.controller.worker, self, window.controller.image_detail
        )
        self._connect()

    def _add_to_menus(self) -> None:
        menus = {a.text().replace("&", ""): a.menu() for a in self._window.menuBar().actions()}
        chat, view = menus.get("Chat"), menus.get("View")
        if isinstance(chat, QMenu):  # a menu action's menu is typed as any QObject
            chat.addSeparator()
            chat.addMenu(self.regenerate_menu)
            chat.addAction(self.compare_action)
        if isinstance(view, QMenu):
            view.addSeparator()
            view.addAction(self.map_action)

    def _connect(self) -> None:
        v = self._variants
        v.started.connect(self._on_started)
        c = self._controller
        c.conversationChanged.connect(self._follow)
        c.conversationOpened.connect(self._on_opened)
        self.dock.visibilityChanged.connect(self._on_map_shown)
        self.source.outlineReady.connect(self._on_outline)
        self.source.statesReady.connect(self._on_states)
        self.dock.tree.switchRequested.connect(self._switch)
        self._window.chat_view.messageWidgetCreated.connect(self.attach_button_menu)

    # -- regenerate ×N ----------------------------------------------------------------------

    def regenerate_last(self, n: int) -> None:
        replies = [v for v in self._window.branches.path_views() if v.role == "assistant"]
        if not replies:
            self._window.show_notice("There is no reply to regenerate yet.")
            return
        self._controller.regenerate_variants(int(replies[-1].id), n)

    def attach_button_menu(self, widget: MessageWidget) -> None:
        """Give a reply's regenerate button a menu of ×2–×4 (its click still regenerates
        once)."""
        button = widget.regenerate_button
        if button is None or button.menu() is not None:
            return
        menu = QMenu(button)
        for n in range(MIN_VARIANTS, MAX_VARIANTS + 1):
            action = menu.addAction(f"Regenerate ×{n} Side by Side")
            action.triggered.connect(
                lambda _=False, n=n, w=widget: self._controller.regenerate_variants(
                    int(w.view.id), n
                )
            )
        button.setMenu(menu)
        button.setPopupMode(button.ToolButtonPopupMode.MenuButtonPopup)

    @Slot(object)
    def _on_started(self, started: VariantsStarted) -> None:
        if self.view is not None:
            self.view.unfollow()
            self.view.close()
        headings = [
            ColumnHeading(f"Version {i + 1}", f"seed {seed}")
            for i, seed in enumerate(started.seeds)
        ]
        self.view = ColumnsView(
            headings,
            f"{len(headings)} Versions Side by Side",
            "Every version is kept as a sibling: ‹ k/n › steps through them later.",
            self._window.window(),
        )
        self.view.follow(self._variants)
        self.view.keepRequested.connect(self._keep)
        self.view.show()

    def _keep(self, index: int) -> None:
        if self._variants.is_busy():
            self._variants.stop()
        if self._variants.keep(index) is not None and self.view is not None:
            self.view.close()

    @Slot(int)
    def _on_opened(self, conversation_id: int) -> None:
        if self._variants.is_busy() and self._variants.conversation_id() != conversation_id:
            self._variants.stop()
        self._follow(conversation_id)

    # -- compare ----------------------------------------------------------------------------

    def compare_focused(self) -> None:
        """The focused reply (else the last reply with versions) against its previous version
        (its next one when it is the first)."""
        focused = QApplication.focusWidget()
        while focused is not None and not isinstance(focused, MessageWidget):
            focused = focused.parentWidget()
        views = self._window.branches.path_views()
        ids = [int(focused.view.id)] if focused is not None else []
        ids += [int(v.id) for v in reversed(views) if v.role == "assistant"]
        for message_id in ids:
            try:
                siblings, index = self._window.store.siblings(message_id)
            except StoreError as exc:
                self._window.show_notice(str(exc))
                return
            if len(siblings) > 1:
                other = index - 1 if index > 0 else 1
                self.compare(siblings, other, index)
                return
        self._window.show_notice("This reply has only one version: regenerate it to compare.")

    def compare(self, siblings: list, old: int, new: int) -> SiblingDiffDialog:
        n = len(siblings)
        self.diff = SiblingDiffDialog(
            siblings[old].content,
            siblings[new].content,
            f"Version {old + 1} of {n}",
            f"Version {new + 1} of {n}",
            self._window.window(),
        )
        self.diff.show()
        return self.diff

    # -- branch map -------------------------------------------------------------------------

    @Slot(bool)
    def _on_map_shown(self, shown: bool) -> None:
        if shown:
            self.source.refresh(self._window.current_conversation_id)

    @Slot(int)
    def _follow(self, conversation_id: int) -> None:
        if self.dock.isVisible() and conversation_id == self._window.current_conversation_id:
            self.source.refresh(conversation_id)

    @Slot(object)
    def _on_outline(self, outline: BranchOutline) -> None:
        self.dock.tree.set_outline(outline.nodes)

    @Slot(object)
    def _on_states(self, found: BranchStates) -> None:
        if found.conversation_id == self._window.current_conversation_id:
            self.dock.tree.set_states(found.states)

    def _switch(self, message_id: int) -> None:
        self._controller.switch_to_message(message_id)
