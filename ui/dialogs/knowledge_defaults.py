"""Preferences › New chats, its knowledge rows: the collections a new chat reads (one removed from
the index since stays listed and chosen, marked, so the choice is not dropped unseen) and the
most a message's knowledge excerpts may take of its prompt, kept with the other defaults of new
chats (`app.chat.knowledge.choice`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QListWidget, QListWidgetItem

from app.chat.knowledge.choice import (
    BUDGET_KEY,
    CHAT_KEY,
    chat_budget,
    chat_collections,
    knowledge_params,
)
from ui.forms.knowledge_budget import budget_box
from ui.forms.sampling_fields import add_hinted_row
from ui.widgets.theme import em


class KnowledgeFields:
    def __init__(self, collections: Sequence[str], defaults: dict[str, Any]) -> None:
        """`collections`: the knowledge the index holds; `defaults`: new chats' params now."""
        chosen, budget = chat_collections(defaults), chat_budget(defaults)
        self.collections = QListWidget()
        self.collections.setObjectName("DefaultKnowledge")
        self.collections.setAccessibleName("Knowledge new chats read")
        self.collections.setToolTip(
            "The knowledge collections a new chat searches with each message"
        )
        for name in dict.fromkeys([*collections, *chosen]):
            shown = name if name in collections else f"{name} (removed)"
            item = QListWidgetItem(shown)  # item text is never read as HTML
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = Qt.CheckState.Checked if name in chosen else Qt.CheckState.Unchecked
            item.setCheckState(checked)
            self.collections.addItem(item)
        if self.collections.count() == 0:
            empty = QListWidgetItem("No knowledge folders yet.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.collections.addItem(empty)
        self.collections.setMaximumHeight(em(self.collections, 6))
        self.budget = budget_box(budget)

    def add_to(self, form: QFormLayout) -> None:
        add_hinted_row(form, "Knowledge", self.collections)
        add_hinted_row(form, "Knowledge per message", self.budget)

    def chosen(self) -> tuple[str, ...]:
        items = [self.collections.item(i) for i in range(self.collections.count())]
        return tuple(
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        )

    def applied_to(self, params: dict[str, Any]) -> dict[str, Any]:
        """New chats' `params` with the knowledge chosen here in place of what they said."""
        kept = {k: v for k, v in params.items() if k not in (CHAT_KEY, BUDGET_KEY)}
        return {**kept, **knowledge_params(self.chosen(), self.budget.value())}
