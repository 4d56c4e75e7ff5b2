"""What an import did, conversation by conversation: imported (with its messages), updated with
N new messages, unchanged, skipped or refused, each with the reason, under a sentence that
counts them; and what became of a Branchwise export's presets and projects. It shows
`app.importers.run.ImportReport`; titles and reasons come from the export and are shown as plain
text only.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.importers import run
from app.importers.writer import ImportStatus, Outcome

_STATUS_NAMES = {
    ImportStatus.IMPORTED: "Imported",
    ImportStatus.UPDATED: "Updated",
    ImportStatus.UNCHANGED: "Unchanged",
    ImportStatus.SKIPPED: "Skipped",
    ImportStatus.REFUSED: "Refused",
}


def outcome_detail(outcome: Outcome) -> str:
    """The row's last column: how many messages, or why not."""
    status, count = outcome.status, outcome.new_messages
    if status is ImportStatus.IMPORTED:
        return f"{count:,} message{'' if count == 1 else 's'}"
    if status is ImportStatus.UPDATED:
        return f"{count:,} new message{'' if count == 1 else 's'}"
    if status is ImportStatus.UNCHANGED:
        return outcome.reason or "Already here: nothing new."
    return outcome.reason


def report_sentence(report: run.ImportReport) -> str:
    counts = report.counts
    parts = [f"{counts.imported:,} imported"]
    if counts.updated:
        parts.append(
            f"{counts.updated:,} updated with {counts.new_messages:,} new "
            f"message{'' if counts.new_messages == 1 else 's'} in all"
        )
    for status, count in (
        ("unchanged", counts.unchanged),
        ("skipped", counts.skipped),
        ("refused", counts.refused),
    ):
        if count:
            parts.append(f"{count:,} {status}")
    unreadable = sum(1 for item in report.inputs if item.error)
    if unreadable:
        parts.append(f"{unreadable:,} file{'' if unreadable == 1 else 's'} could not be read")
    sentence = ", ".join(parts) + "."
    if report.cancelled:
        sentence = (
            "Cancelled. Only whole conversations were kept: " + sentence[0].lower() + sentence[1:]
        )
    return sentence


class ImportReport(QWidget):
    """The report of one import (or of a cancelled one)."""

    def __init__(self, report: run.ImportReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ImportReport")
        self.report = report
        self.sentence = QLabel(report_sentence(report))
        self.sentence.setObjectName("ImportReportSentence")
        self.sentence.setTextFormat(Qt.TextFormat.PlainText)
        self.sentence.setWordWrap(True)
        self.sentence.setAccessibleName("What the import did")
        self.tree = QTreeWidget()
        self.tree.setObjectName("ImportOutcomes")
        self.tree.setAccessibleName("Each conversation's outcome")
        self.tree.setHeaderLabels(["Outcome", "Conversation", "Details"])
        self.tree.setRootIsDecorated(False)
        self.tree.setWordWrap(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.sentence)
        layout.addWidget(self.tree, 1)
        for item in report.inputs:
            if item.error:
                self._add("Refused", Path(item.path).name, item.error)
            for line in item.settings:  # a Branchwise export's presets and projects
                kind, _, said = line.partition(": ")
                self._add("Settings", kind, said)
            for outcome in item.outcomes:
                self._add(
                    _STATUS_NAMES[outcome.status],
                    outcome.title or outcome.where,
                    outcome_detail(outcome),
                )
        self.tree.setColumnWidth(1, max(self.tree.sizeHintForColumn(1), 160))

    def _add(self, status: str, title: str, detail: str) -> None:
        row = QTreeWidgetItem(self.tree, [status, title, detail])
        for column, text in enumerate((status, title, detail)):
            row.setToolTip(column, text)

    def statuses(self) -> list[tuple[str, str, str]]:
        """Each row's (outcome, conversation, details), as shown."""
        tree = self.tree
        rows = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
        return [(row.text(0), row.text(1), row.text(2)) for row in rows if row is not None]
