"""The bar above the chat: the sidebar toggle, the conversation's title (with small markers
under it: its project, and whether the chat has its own system prompt), its settings button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QVBoxLayout, QWidget

from ui.text.plain_text import literal, plain_label
from ui.widgets.icon_button import icon_button
from ui.widgets.theme import em, scale_font


class ChatHeader(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatHeader")
        # A QWidget subclass paints its style sheet background and border (the line under
        # the header) only when asked to.
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.sidebar_button = icon_button(
            "panel-left",
            "Toggle sidebar",
            "Show or hide the conversation list (Ctrl+Shift+S)",
            "HeaderButton",
        )
        self.title_label = plain_label()  # a title is whatever the person typed
        self.title_label.setObjectName("ChatTitle")
        self.title_label.setAccessibleName("Conversation title")
        # A long title must not widen the window: it is cut to the room there is.
        self.title_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.prompt_marker = plain_label("Custom system prompt")
        self.prompt_marker.setObjectName("SystemPromptMarker")
        scale_font(self.prompt_marker, 0.8)
        self.prompt_marker.hide()
        self.project_marker = plain_label()  # a project's name is whatever the person typed
        self.project_marker.setObjectName("ProjectMarker")
        self.project_marker.setAccessibleName("Project")
        scale_font(self.project_marker, 0.8)
        self.project_marker.hide()
        self.settings_button = icon_button(
            "sliders",
            "Conversation settings",
            "Model, system prompt and sampling for this conversation",
            "HeaderButton",
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(em(self, 0.5), em(self, 0.3), em(self, 0.5), em(self, 0.3))
        row.addWidget(self.sidebar_button)
        column = QVBoxLayout()
        column.setSpacing(0)
        column.addWidget(self.title_label)
        markers = QHBoxLayout()
        markers.setSpacing(em(self, 0.8))
        markers.addWidget(self.project_marker)
        markers.addWidget(self.prompt_marker)
        markers.addStretch(1)
        column.addLayout(markers)
        row.addLayout(column, 1)
        row.addWidget(self.settings_button)

    def set_system_prompt(self, system_prompt: str) -> None:
        """Mark a chat that has its own system prompt; the prompt shows in the tooltip."""
        self.prompt_marker.setVisible(bool(system_prompt.strip()))
        self.prompt_marker.setToolTip(literal(system_prompt.strip()[:500]))

    def set_project(self, name: str, note: str) -> None:
        """Name the chat's project ("" for none), with `note` after it ("" for none)."""
        text = f"Project “{name}”" + (f" · {note}" if note else "")
        self.project_marker.setText(text)
        self.project_marker.setToolTip(
            literal(
                f"{text}.\nIts instructions come first in this chat's system prompt."
                if name
                else ""
            )
        )
        self.project_marker.setVisible(bool(name))
