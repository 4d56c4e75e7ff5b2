"""Help › About names the version (issue 18 item 9)."""

from __future__ import annotations

from importlib.metadata import version

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from ui.dialogs.about_box import show_about


def test_about_shows_the_version(qtbot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    shown: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, answer)
            return
        shown.append(box.text())
        box.accept()

    QTimer.singleShot(0, answer)
    show_about(parent)
    assert f"<b>Branchwise</b> {version('branchwise')}<br>" in shown[0]
