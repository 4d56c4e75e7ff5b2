"""What the composer holds besides text: the files and images attached to the draft and the
chat's Think switch, kept in step with the controller.

Files asked for (paperclip, paste, or a drop on the window that is no chat export) are read and
counted on the worker (audio files excepted: they are offered for transcription,
`audioFilesChosen`, ui.window.voice_features); each comes back through `attachmentReady` as a
chip, or as a notice saying why it was refused. Images (those files with an image's name, or a
picture pasted) are kept in the image store and counted the same way and come back through
`imageReady`, to the composer or to the inline editor that asked. A PDF with no text layer comes
back as an offer of its pages as images (`ui.dialogs.pdf_pages_offer`); the pages chosen arrive
one by one as image chips, rendered on the worker. Whether the loaded model sees images is told
to the composer, whose image chips and Send say so. The Think controls show only for a model
whose template reads such a switch and write the person's choice into the open chat's params.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QDragEnterEvent

from app.chat.image_attach import ImageAttached, ScannedPdf, is_image_path, model_sight
from app.chat.prompt_counts import FileAttached
from app.generation.model_session import ModelState
from app.generation.think_settings import EFFORT, THINK
from app.store.conversations import StoreError
from app.voice.audio_names import is_audio_path
from ui.chat.composer import local_files
from ui.chat.draft_attachments import stored_image
from ui.chat.image_files import converted_for_store
from ui.window.conversation_views import image_view
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.window.model_status_presenter import ModelStatusPresenter
    from ui.window.token_counter import TokenCounter


class ExtrasHost(ChatPane, Protocol):
    """The window as the composer's extras use it."""

    token_counter: TokenCounter
    model_status: ModelStatusPresenter

    def setAcceptDrops(self, on: bool, /) -> None: ...


class ComposerExtras(QObject):
    audioFilesChosen = Signal(list)  # audio file paths: offered for transcription (voice)

    def __init__(self, window: ExtrasHost) -> None:
        super().__init__(window.window())
        self._window = window
        composer, controller = window.composer, window.controller
        composer.attachRequested.connect(self.attach)
        composer.imagePasted.connect(self.attach_pasted)
        window.chat_view.editImagesRequested.connect(self._attach_to_edit)
        window.chat_view.editImagePasted.connect(self._paste_to_edit)
        controller.imageReady.connect(self._on_image_ready)
        composer.think.thinkToggled.connect(self._on_think_toggled)
        composer.think.effortChosen.connect(self._on_effort_chosen)
        controller.attachmentReady.connect(self._on_attachment_ready)
        controller.scannedPdf.connect(self._offer_pages)
        window.model_status.ready.connect(self.refresh_model_controls)
        window.setAcceptDrops(True)

    # -- files ------------------------------------------------------------------------------

    @Slot(list)
    def attach(self, paths: list[str]) -> None:
        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        if cid is None:
            return  # no chat could be made (a notice said why): the files have none to join
        audio = [path for path in paths if is_audio_path(path)]
        if audio:
            self.audioFilesChosen.emit(audio)
        for path in paths:
            if is_audio_path(path):
                continue
            if is_image_path(path):
                self._attach_image(cid, path)
            else:
                window.controller.counts.attach_file(cid, path)

    def _attach_image(self, cid: int, path: str, for_message: int | None = None) -> None:
        counts = self._window.controller.counts
        converted = converted_for_store(path)
        if converted is None:
            counts.attach_image(cid, path, for_message=for_message)
        else:
            counts.attach_image(cid, converted[0], converted[1], for_message=for_message)

    @Slot(bytes)
    def attach_pasted(self, png: bytes) -> None:
        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        if cid is not None:  # None: no chat could be made (a notice said why)
            window.controller.counts.attach_image(cid, png)

    @Slot(str, list)
    def _attach_to_edit(self, message_id: str, paths: list[str]) -> None:
        cid = self._window.current_conversation_id
        if cid is None:
            return  # a message is edited in an open chat: never seen
        for path in paths:
            self._attach_image(cid, path, for_message=int(message_id))

    @Slot(str, bytes)
    def _paste_to_edit(self, message_id: str, png: bytes) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:  # a message is edited in an open chat: None is never seen
            self._window.controller.counts.attach_image(cid, png, for_message=int(message_id))

    @Slot(object)
    def _on_image_ready(self, attached: ImageAttached) -> None:
        window = self._window
        if attached.conversation_id != window.current_conversation_id:
            return  # kept for a chat no longer on screen: its draft went with it
        view = image_view(attached.record, window.store.images)
        if attached.for_message is None:
            window.composer.add_image(view)
            return
        widget = window.chat_view.message_widget(str(attached.for_message))
        if widget is not None:
            widget.add_edit_image(view)

    @Slot(object)
    def _on_attachment_ready(self, attached: FileAttached) -> None:
        # A file read for another chat (the person switched meanwhile) is not attached here.
        if attached.conversation_id == self._window.current_conversation_id:
            self._window.composer.add_attachment(attached.record)

    @Slot(object)
    def _offer_pages(self, offer: ScannedPdf) -> None:
        from ui.dialogs.pdf_pages_offer import PdfPagesOffer  # imported when first used

        window = self._window
        if offer.conversation_id != window.current_conversation_id:
            return  # asked for a chat no longer on screen: its draft went with it
        dialog = PdfPagesOffer(offer, window.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(
            lambda: window.controller.counts.attach_pdf_pages(
                offer.conversation_id, offer.path, dialog.first(), dialog.last()
            )
        )
        dialog.open()

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if local_files(event.mimeData()):
            event.acceptProposedAction()

    # -- what the loaded model takes: the Think switch, images ----------------------------

    @Slot()
    def refresh_model_controls(self) -> None:
        """Show the controls the loaded model takes, with the open chat's choices, and whether
        it sees the draft's images."""
        window = self._window
        cid = window.current_conversation_id
        # A remote server is asked whatever it is sent: only the local model is known here.
        remote = cid is not None and window.controller.remote_model(cid)
        sight = model_sight(None if remote else window.controller.model_info)
        window.composer.set_model_sight(sight.blind, sight.refusal)
        window.chat_view.set_model_sight(sight.blind, sight.refusal)
        drafted = window.composer.attached.image_views()
        if drafted and cid is not None and window.controller.model_state == ModelState.READY:
            # Counted for the model loaded when they were attached: count them for this one.
            window.controller.counts.recount_images(cid, [stored_image(v) for v in drafted])
        info = window.controller.model_info
        controls = window.composer.think
        if info is None:
            controls.set_support(False, ())
        else:
            controls.set_support(bool(info.think_switch), info.effort_levels)
        if cid is None:
            return
        try:
            controls.set_values(window.store.get_conversation(cid).params)
        except StoreError as exc:
            window.show_notice(str(exc))

    @Slot(bool)
    def _on_think_toggled(self, think: bool) -> None:
        self._change_reasoning({THINK: think})

    @Slot(str)
    def _on_effort_chosen(self, effort: str) -> None:
        self._change_reasoning({EFFORT: effort})

    def _change_reasoning(self, change: dict[str, Any]) -> None:
        window = self._window
        cid = window.current_conversation_id
        if cid is None:
            return
        window.controller.change_params(cid, change)
        window.token_counter.schedule()  # the template renders a different prompt
