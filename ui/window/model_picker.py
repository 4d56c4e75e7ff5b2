"""The model picker beside the composer: the open chat's model, and a quick way to switch it.

It lists what the chat's settings dialog offers (the library's usable models by their readable
names, then models on connected servers) and switches the chat's model the same way
(`WindowModels.use`: a library model is recorded in the chat and loaded). It follows the chat on
screen, and is disabled while a reply is being written. The library is listed again each time
the list opens, so a model added meanwhile is there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter

from app.async_tasks import spawn
from app.store.conversations import StoreError
from ui.forms.model_choices import add_remote_models, fill_models
from ui.widgets.theme import em
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from app.library.entries import ModelInfo
    from ui.window.model_status_presenter import ModelStatusPresenter
    from ui.window.models import WindowModels

_TIP = "The model this chat uses; choosing another loads it"
_BUSY_TIP = "The model can be changed once the reply is finished"


class PickerHost(ChatPane, Protocol):
    """The window as the model picker uses it."""

    models: WindowModels
    model_status: ModelStatusPresenter


class PickerBox(QComboBox):
    """A combo box that says when its list is about to open (to list the library afresh), and
    ends a name too long for its width with "…" (Qt's styles cut it off)."""

    aboutToShowPopup = Signal()

    def showPopup(self) -> None:
        self.aboutToShowPopup.emit()
        super().showPopup()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            option,
            QStyle.SubControl.SC_ComboBoxEditField,
            self,
        )
        option.currentText = self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class ModelPicker(QObject):
    def __init__(self, window: PickerHost) -> None:
        super().__init__(window.window())
        self._window = window
        # None until the library is first listed: once a model is ready or the list opens,
        # never before the window's first paint (listing reads every model's files).
        self._models: list[ModelInfo] | None = None
        self._remote: list[str] = []
        self._shown: int | None = None  # the conversation whose model the box shows
        box = self.box = PickerBox()
        box.setObjectName("ModelPicker")
        box.setAccessibleName("Model for this chat")
        box.setToolTip(_TIP)
        # As wide as the longest name up to this width, then elided; the tooltip has it whole.
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        box.setMaximumWidth(em(box, 14))
        window.composer.add_to_footer(box)
        box.aboutToShowPopup.connect(self._on_popup)
        box.activated.connect(self._on_activated)
        box.currentIndexChanged.connect(self._show_full_name)
        controller = window.controller
        controller.conversationOpened.connect(self._on_opened)
        controller.conversationChanged.connect(self._on_changed)
        controller.busyChanged.connect(self._on_busy)
        window.model_status.ready.connect(self.reload)

    @Slot()
    def reload(self) -> None:
        """List the library again and show the chat's model."""
        self._models = self._window.models.library()
        self._show(self._shown)

    def current_model(self) -> str | None:
        """The model id the picker shows."""
        return self.box.currentData()

    # -- following the chat ------------------------------------------------------------------

    @Slot(int)
    def _on_opened(self, conversation_id: int) -> None:
        self._show(conversation_id)

    @Slot(int)
    def _on_changed(self, conversation_id: int) -> None:
        if conversation_id == self._shown:
            self._show(conversation_id)  # its model may have changed

    def _show(self, conversation_id: int | None) -> None:
        self._shown = conversation_id
        if self._models is None:
            return
        current = self._chat_model(conversation_id)
        self.box.blockSignals(True)
        fill_models(self.box, self._models, current)
        add_remote_models(self.box, self._remote)
        self.box.blockSignals(False)
        self._show_full_name()

    def _chat_model(self, conversation_id: int | None) -> str | None:
        """The chat's own model, else (a chat that has none yet) the one loaded now."""
        model_id = None
        if conversation_id is not None:
            try:
                model_id = self._window.store.get_conversation(conversation_id).model_id
            except StoreError:
                model_id = None
        return model_id or self._window.models.loaded_id()

    @Slot()
    def _show_full_name(self) -> None:
        if not self.box.isEnabled():
            return
        # The item's tooltip: its whole name, made safe to show by `ui.model_choices`.
        self.box.setToolTip(self.box.currentData(Qt.ItemDataRole.ToolTipRole) or _TIP)

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self.box.setEnabled(not busy)
        if busy:
            self.box.setToolTip(_BUSY_TIP)
        else:
            self._show_full_name()

    # -- choosing ----------------------------------------------------------------------------

    @Slot()
    def _on_popup(self) -> None:
        self.reload()
        if self._window.controller.connections is not None:
            spawn(self._offer_remote_models())

    async def _offer_remote_models(self) -> None:
        from app.remote.client import remote_model_ids

        connections = self._window.controller.connections
        assert connections is not None
        self._remote = await remote_model_ids(connections)
        add_remote_models(self.box, self._remote)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        window = self._window
        chosen: Any = self.box.itemData(index)
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        assert cid is not None
        if chosen is None or chosen == self._chat_model(cid):
            return
        if not window.models.use(cid, chosen):
            self._show(cid)  # refused (the notice says why): the chat's model again
