"""What an import would bring, before anything is written: per input and format, a line of
numbers (conversations, messages, branches, dates, attachments found and missing), then every
conversation with a tick box (untick one to leave it out), then the problems found.

It shows `app.importers.preview.Preview`. Titles and problems come from the export (untrusted):
they are shown as plain text only.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.importers.preview import FormatPreview, Preview
from ui.widgets.theme import em, scale_font
from ui.widgets.visibility import set_shown

FORMAT_NAMES = {
    "chatgpt": "ChatGPT",
    "claude": "Claude",
    "openwebui": "Open WebUI",
    "librechat": "LibreChat",
    "lmstudio": "LM Studio",
    "jan": "Jan",
    "sillytavern": "SillyTavern",
    "textgen": "text-generation-webui",
    "chatbox": "Chatbox",
    "branchwise": "Branchwise",
}
_MISSING_NAMES_SHOWN = 3
_KEY = Qt.ItemDataRole.UserRole


def format_name(key: str) -> str:
    return FORMAT_NAMES.get(key, key)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _day(iso: str | None) -> str:
    if not iso:
        return ""
    day = datetime.fromisoformat(iso)
    return f"{day.day} {day:%b %Y}"


def summary_line(summary: FormatPreview) -> str:
    """E.g. "3 conversations · 12 messages · 5 branches · 2 Jan 2024 – 4 Mar 2024 ·
    2 attachments found, 1 not in the export (photo.png)"."""
    parts = [
        _plural(len(summary.conversations), "conversation"),
        _plural(summary.messages, "message"),
        _plural(summary.branches, "branch").replace("branchs", "branches"),
    ]
    first, last = _day(summary.first), _day(summary.last)
    if first:
        parts.append(first if first == last else f"{first} – {last}")
    missing = summary.attachments_missing
    found = summary.attachments_found
    if found or missing:
        files = f"{_plural(found, 'attachment')} found"
        if missing:
            names = ", ".join(missing[:_MISSING_NAMES_SHOWN])
            more = "…" if len(missing) > _MISSING_NAMES_SHOWN else ""
            files += f", {len(missing):,} not in the export ({names}{more})"
        parts.append(files)
    return " · ".join(parts)


class ImportPreview(QWidget):
    """The preview of one import; `chosen()` are the ticked (format, source id) pairs."""

    def __init__(self, preview: Preview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ImportPreview")
        self.summary = QLabel()
        self.summary.setObjectName("ImportSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("What the import holds")
        self.tree = QTreeWidget()
        self.tree.setObjectName("ImportConversations")
        self.tree.setAccessibleName("Conversations to import")
        self.tree.setHeaderLabels(["Conversation", "Messages", "Branches"])
        self.tree.setRootIsDecorated(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.problems_label = QLabel("Problems")
        scale_font(self.problems_label, 0.95, bold=True)
        self.problems = QPlainTextEdit()
        self.problems.setObjectName("ImportProblems")
        self.problems.setReadOnly(True)
        self.problems.setAccessibleName("Problems found in the files")
        self.problems.setMaximumHeight(em(self, 7))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.problems)
        self._fill(preview)

    def _fill(self, preview: Preview) -> None:
        lines: list[str] = []
        problems: list[str] = []
        for item in preview.inputs:
            name = Path(item.path).name
            for summary in item.formats:
                key = summary.format
                lines.append(f"{name} · {format_name(key)}: {summary_line(summary)}")
                self._add_group(f"{format_name(key)} — {name}", summary)
                problems += summary.warnings
            if not item.formats and not item.problems:
                problems.append(f"{name}: no conversations were found.")
            problems += item.problems
        self.summary.setText("\n".join(lines) or "Nothing to import was found.")
        self.problems.setPlainText("\n".join(problems))
        set_shown(self.problems_label, bool(problems))
        set_shown(self.problems, bool(problems))
        self.tree.expandAll()

    def _add_group(self, label: str, summary: FormatPreview) -> None:
        group = QTreeWidgetItem(
            self.tree, [label, f"{summary.messages:,}", f"{summary.branches:,}"]
        )
        group.setFlags(
            group.flags() | Qt.ItemFlag.ItemIsAutoTristate | Qt.ItemFlag.ItemIsUserCheckable
        )
        for conversation in summary.conversations:
            title = conversation.title
            row = QTreeWidgetItem(
                group, [title, f"{conversation.messages:,}", f"{conversation.branches:,}"]
            )
            row.setData(0, _KEY, (summary.format, conversation.source_id))
            if conversation.empty:
                row.setText(0, f"{title} (empty: skipped)")
                row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                row.setCheckState(0, Qt.CheckState.Unchecked)
            else:
                row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                row.setCheckState(0, Qt.CheckState.Checked)
            row.setToolTip(0, title)
        if group.childCount() == 0:
            group.setCheckState(0, Qt.CheckState.Unchecked)

    def rows(self) -> list[QTreeWidgetItem]:
        """Every conversation's row, in order."""
        found = []
        groups = (self.tree.topLevelItem(g) for g in range(self.tree.topLevelItemCount()))
        for group in (g for g in groups if g is not None):
            found += [row for i in range(group.childCount()) if (row := group.child(i)) is not None]
        return found

    def set_checked(self, title: str, checked: bool) -> None:
        """Tick or untick the conversation titled `title`, as a click on its box would."""
        for row in self.rows():
            if row.toolTip(0) == title:
                row.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def chosen(self) -> set[tuple[str, str]]:
        """The ticked conversations as (format, source id) pairs."""
        return {
            tuple(row.data(0, _KEY))
            for row in self.rows()
            if row.checkState(0) == Qt.CheckState.Checked
        }

    def empty(self) -> set[tuple[str, str]]:
        """The conversations without messages (no box to tick: the report lists them as
        skipped)."""
        return {
            tuple(row.data(0, _KEY))
            for row in self.rows()
            if not row.flags() & Qt.ItemFlag.ItemIsEnabled
        }
