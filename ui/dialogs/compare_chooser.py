"""Compare with…: which 2 to 4 models answer a message, and whether their names stay hidden
until one answer is kept (blind).

It lists the library's usable models, then the connected servers' models once they answer, the
chat's own model checked first. Under the list it says, as the checks change, how the run will
use memory (side by side or one after another, with the sizes and the free memory: the plan the
app will follow) or why it cannot run; the send button names how many models it asks. The
dialog only collects the choice; the window sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.generation.compare_plan import MAX_MODELS, MIN_MODELS, CompareModel, ComparePlan
from app.sizes import format_bytes
from ui.text.plain_text import plain_label
from ui.widgets.theme import em

# Plans the memory of a choice; raises ValueError (CompareRefused) saying why it cannot run.
PlanFor = Callable[[list[CompareModel]], ComparePlan]


def model_line(model: CompareModel) -> str:
    """A model as the list shows it: its name, and where it runs."""
    if model.local:
        return f"{model.name}  ·  {format_bytes(model.weights_bytes)} in memory"
    return f"{model.name}  ·  runs on its server"


class CompareChooser(QDialog):
    def __init__(
        self,
        models: Sequence[CompareModel],
        checked: Sequence[str],
        plan_for: PlanFor,
        parent: QWidget | None = None,
    ) -> None:
        """`models` the library's; `checked` the model ids checked at first (the chat's own)."""
        super().__init__(parent)
        self.setObjectName("CompareChooser")
        self.setWindowTitle("Compare Models")
        self.setAccessibleName("Compare models")
        self._plan_for = plan_for
        self.plan: ComparePlan | None = None
        intro = plain_label(
            f"Send this message to {MIN_MODELS} to {MAX_MODELS} models. Every answer is kept as "
            "a branch of the chat (‹ k/n ›), and a follow-up on a branch goes to its model."
        )
        intro.setWordWrap(True)
        self.list = QListWidget()
        self.list.setObjectName("CompareModels")
        self.list.setAccessibleName("Models to compare")
        self.memory = plain_label()
        self.memory.setObjectName("CompareMemory")
        self.memory.setWordWrap(True)
        self.memory.setAccessibleName("How the models will run")
        self.blind = QCheckBox("Blind: hide the models' names until I keep an answer")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("PrimaryButton")
        self.send_button.setDefault(True)
        self.buttons.addButton(self.send_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSpacing(em(self, 0.6))
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.memory)
        layout.addWidget(self.blind)
        layout.addWidget(self.buttons)
        self.add_models(models, checked)
        self.list.itemChanged.connect(self._on_changed)
        self._on_changed()
        self.resize(em(self, 34), em(self, 20))

    def add_models(self, models: Sequence[CompareModel], checked: Sequence[str] = ()) -> None:
        """List `models` after those listed (a server's, once it answered); ids listed stay."""
        listed = {m.model_id for m in self._all()}
        self.list.blockSignals(True)
        for model in models:
            if model.model_id in listed:
                continue
            item = QListWidgetItem(model_line(model))
            item.setData(Qt.ItemDataRole.UserRole, model)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            on = model.model_id in checked
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._on_changed()

    def set_checked(self, model_ids: Sequence[str]) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            on = item.data(Qt.ItemDataRole.UserRole).model_id in model_ids
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def chosen(self) -> list[CompareModel]:
        """The checked models, in the list's order (their columns' order)."""
        return [
            self.list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.list.count())
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def _all(self) -> list[CompareModel]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    @Slot()
    def _on_changed(self, _item: QListWidgetItem | None = None) -> None:
        chosen = self.chosen()
        self.plan = None
        if len(chosen) < MIN_MODELS or len(chosen) > MAX_MODELS:
            text, kind = f"Check {MIN_MODELS} to {MAX_MODELS} models.", ""
        else:
            try:
                self.plan = self._plan_for(chosen)
            except ValueError as exc:
                text, kind = str(exc), "danger"
            else:
                text = self.plan.notice or "The answers stream side by side."
                kind = "" if self.plan.together else "warning"
        self.memory.setText(text)
        self.memory.setProperty("kind", kind)
        self.memory.style().unpolish(self.memory)
        self.memory.style().polish(self.memory)
        self.send_button.setEnabled(self.plan is not None)
        self.send_button.setText(f"Send to {len(chosen)} Models" if self.plan else "Send")
