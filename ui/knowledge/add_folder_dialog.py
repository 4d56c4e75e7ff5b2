"""Naming a new knowledge folder: the name (the folder's own name to begin with), whether links
inside it are followed, and a clear refusal, before anything is indexed, of a name already taken
(whatever its case: two folders called "Papers" and "papers" would be told apart by no one) or
of a folder already indexed under another name."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ui.text.plain_text import plain_label
from ui.widgets.theme import em


def name_problem(name: str, root: Path, taken: Mapping[str, str]) -> str:
    """Why `name` over `root` cannot be added, given the folders there are (name -> root);
    "" when it can."""
    name = name.strip()
    if not name:
        return "A knowledge folder needs a name."
    for other in taken:
        if other.casefold() == name.casefold():
            return f"There is already a knowledge folder named “{other}”. Choose another name."
    for other, other_root in taken.items():
        if Path(other_root) == root:
            return f"This is already indexed as “{other}”."
    return ""


class AddFolderDialog(QDialog):
    def __init__(self, root: Path, taken: Mapping[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AddKnowledgeDialog")
        self.setWindowTitle("Add Knowledge")
        self.root = root
        self._taken = dict(taken)
        is_folder = root.is_dir()
        self.name_edit = QLineEdit(root.name if is_folder else root.stem)
        self.name_edit.setAccessibleName("Name")
        self.name_edit.selectAll()
        self.follow_links = QCheckBox("Follow symbolic links inside it")
        self.follow_links.setToolTip(
            "Links can lead out of the folder (to a whole disk) or back into it; "
            "they are passed over unless this is on."
        )
        self.follow_links.setVisible(is_folder)
        where = plain_label(str(root))
        where.setWordWrap(True)
        where.setObjectName("KnowledgeRoot")
        self.problem = plain_label("")
        self.problem.setObjectName("KnowledgeProblem")
        self.problem.setWordWrap(True)
        note = plain_label(
            "Branchwise reads the files and keeps an index of their text beside your chats. "
            "Your files are never changed."
        )
        note.setObjectName("FieldHint")
        note.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.add_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.add_button.setText("Add and Index")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Name:", self.name_edit)
        form.addRow("Folder:" if is_folder else "File:", where)
        form.addRow("", self.follow_links)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(em(self, 30))
        self.name_edit.textChanged.connect(self._check)
        self._check()

    @property
    def name(self) -> str:
        return self.name_edit.text().strip()

    def _check(self) -> None:
        problem = name_problem(self.name, self.root, self._taken)
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        self.add_button.setEnabled(not problem)
