"""The knowledge button by the composer: which knowledge collections this chat reads, chosen per
chat from a menu of the collections the index holds. A collection the chat names that is gone
from the index stays listed (checked, marked removed) so the person sees why it finds nothing.
Collection names come from the person's folders: shown as plain text (menu text escapes `&`)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from ui.text.plain_text import literal, menu_text

NO_KNOWLEDGE = "No knowledge folders yet: add one on the Knowledge page."


class KnowledgeButton(QToolButton):
    collectionsChosen = Signal(list)  # the names of the collections the chat reads now

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("KnowledgeButton")
        self.setAccessibleName("Knowledge")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._menu = QMenu(self)
        self._menu.setObjectName("KnowledgeMenu")
        self.setMenu(self._menu)
        self._chosen: list[str] = []
        self.set_collections([], [])

    @property
    def chosen(self) -> list[str]:
        return list(self._chosen)

    def set_collections(self, available: Sequence[str], chosen: Sequence[str]) -> None:
        """List `available` (the index's collections), with `chosen` checked."""
        self._chosen = list(dict.fromkeys(chosen))
        self._menu.clear()
        names = list(dict.fromkeys([*available, *self._chosen]))
        for name in names:
            removed = "" if name in available else " (removed)"
            action = QAction(menu_text(name + removed), self._menu)
            action.setCheckable(True)
            action.setChecked(name in self._chosen)
            action.setData(name)
            action.toggled.connect(self._on_toggled)
            self._menu.addAction(action)
        if not names:
            empty = self._menu.addAction(menu_text(NO_KNOWLEDGE))
            empty.setEnabled(False)
        self._show_choice()

    def _show_choice(self) -> None:
        count = len(self._chosen)
        self.setText(f"Knowledge · {count}" if count else "Knowledge")
        tip = (
            "This chat reads: " + ", ".join(self._chosen)
            if self._chosen
            else "This chat reads no knowledge. Choose collections to search with each message."
        )
        self.setToolTip(literal(tip))
        self.setAccessibleDescription(tip)

    def _on_toggled(self, _checked: bool) -> None:
        self._chosen = [a.data() for a in self._menu.actions() if a.isCheckable() and a.isChecked()]
        self._show_choice()
        self.collectionsChosen.emit(self.chosen)
