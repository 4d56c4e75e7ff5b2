"""Token counts for the composer, made on the worker: how many tokens the prompt a draft would
make takes (with its attached files and images), and what a file or an image to attach costs,
refusing one the model's context cannot hold. A PDF with no text layer is offered as page
images instead (`scannedPdf`, with what a page costs), and the pages chosen are rendered, kept
and counted one per worker call, so neither the window nor a reply waits for the whole document.
Answers come back through the controller's `tokenCount`, `attachmentReady`, `scannedPdf` and
`imageReady` signals, or its `notice`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from app.chat.image_attach import (
    ImageAttached,
    ModelSight,
    ScannedPdf,
    model_sight,
    unreadable_scan,
)
from app.generation.attachments import (
    AttachedFile,
    AttachmentError,
    NoTextLayer,
    read_attachment,
    wrap_file,
)
from app.generation.model_session import ModelState
from app.generation.prompt_messages import message_content, prompt_messages
from app.generation.think_settings import template_kwargs
from app.images.pdf_pages import outline, render_pages
from app.images.store import ImageError, StoredImage
from app.settings import chat_context_length
from app.store.conversations import StoreError

if TYPE_CHECKING:
    from app.generation.worker import EngineLike, InferenceWorker
    from app.generation.worker_events import ModelLoaded
    from app.qt_signal import QtSignal
    from app.store.conversations import Store


@dataclass(frozen=True, slots=True)
class TokenCount:
    """The prompt a draft of `conversation_id` would make takes `count` tokens, of a context of
    `context_length` (the chat's own when it set one below the model's); `overflow` is the
    chat's policy for a prompt that outgrows it."""

    conversation_id: int
    count: int
    context_length: int | None
    overflow: str


@dataclass(frozen=True, slots=True)
class FileAttached:
    """A file read for the draft of `conversation_id`, and the tokens its text costs."""

    conversation_id: int
    file: AttachedFile
    tokens: int

    @property
    def record(self) -> dict[str, Any]:
        """The attachment record the message will keep."""
        return self.file.as_record(self.tokens)


class CountingHost(Protocol):
    """What the counts need of the chat controller that owns them (its state and signals)."""

    store: Store
    worker: InferenceWorker
    notice: Final[QtSignal]
    tokenCount: Final[QtSignal]
    attachmentReady: Final[QtSignal]
    scannedPdf: Final[QtSignal]
    imageReady: Final[QtSignal]

    @property
    def model_state(self) -> ModelState: ...

    @property
    def model_info(self) -> ModelLoaded | None: ...

    def remote_model(self, conversation_id: int) -> str | None: ...

    def overflow_policy(self, conversation_id: int) -> str: ...

    def image_detail(self, model_id: str | None = None) -> int | None: ...


class PromptCounts:
    def __init__(self, controller: CountingHost) -> None:
        self._controller = controller
        self._store = controller.store
        self._worker = controller.worker

    def request_token_count(
        self,
        conversation_id: int,
        draft: str,
        attachments: list[dict[str, Any]] | None = None,
    ) -> None:
        """Count the prompt the draft and its attached files would make (on the worker);
        answers with `tokenCount`."""
        controller = self._controller
        if controller.model_state != ModelState.READY or controller.remote_model(conversation_id):
            return  # a remote model's tokenizer is not here to count with
        try:
            conversation = self._store.get_conversation(conversation_id)
            path = self._store.active_path(conversation_id)
            detail = controller.image_detail()
            messages = prompt_messages(self._store, conversation_id, path, detail)
            overflow = controller.overflow_policy(conversation_id)
        except StoreError:
            return
        if draft.strip() or attachments:
            content = message_content(draft, attachments or [], self._store.images, detail)
            messages.append({"role": "user", "content": content})
        kwargs = template_kwargs(controller.model_info, conversation.params)
        params = conversation.params

        def count(engine: EngineLike | None) -> TokenCount | None:
            if engine is None or not messages:
                return None
            return TokenCount(
                conversation_id,
                engine.count_prompt_tokens(messages, kwargs),
                chat_context_length(engine.context_length, params),
                overflow,
            )

        self._worker.call(count, on_done=self._emit_token_count)

    def attach_file(self, conversation_id: int, path: str) -> None:
        """Read a file and count its tokens on the worker (after any reply being written);
        answers with `attachmentReady`, `scannedPdf` for a PDF with no text layer, or a notice
        saying why the file was refused (not text, unreadable, a scanned PDF a text-only model
        cannot read, or more tokens than the chat's context holds: its own context length
        when it set one, else the model's)."""
        controller = self._controller
        if controller.model_state != ModelState.READY:
            controller.notice.emit("Files can be attached once the model has loaded.")
            return
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            params = {}
        sight, detail = model_sight(controller.model_info), controller.image_detail()

        def read(engine: EngineLike | None) -> FileAttached | ScannedPdf:
            if engine is None:
                raise AttachmentError("Files can be attached once the model has loaded.")
            try:
                attached = read_attachment(path)
            except NoTextLayer:
                return self._scanned(conversation_id, path, engine, sight, detail)
            bare = [{"role": "user", "content": ""}]
            wrapped = [{"role": "user", "content": wrap_file(attached.name, attached.text)}]
            tokens = engine.count_prompt_tokens(wrapped) - engine.count_prompt_tokens(bare)
            if too_many := _over_context(attached.name, tokens, engine, params):
                raise AttachmentError(too_many)
            return FileAttached(conversation_id, attached, tokens)

        def done(result: FileAttached | ScannedPdf) -> None:
            scanned = isinstance(result, ScannedPdf)
            (controller.scannedPdf if scanned else controller.attachmentReady).emit(result)

        self._worker.call(read, on_done=done, on_error=controller.notice.emit)

    def _scanned(
        self,
        conversation_id: int,
        path: str,
        engine: EngineLike,
        sight: ModelSight,
        detail: int | None,
    ) -> ScannedPdf:
        """On the worker: the offer of a scanned PDF's pages, with what its first page costs,
        counted as its chip will be (rendered, kept, then counted at the model's detail)."""
        found = outline(path)
        if not sight.sees:
            raise AttachmentError(unreadable_scan(found.name, sight))
        name, png = render_pages(path, 1, 1)[0]
        tokens = self._image_tokens(engine, self._store.images.add_bytes(png, name), detail)
        return ScannedPdf(conversation_id, path, found.name, found.pages, tokens)

    def attach_pdf_pages(self, conversation_id: int, path: str, first: int, last: int) -> None:
        """Pages `first` to `last` of a scanned PDF as image chips named "<doc> page N.png":
        each rendered, kept and counted on the worker in its own call (in page order), and
        answered with `imageReady` as an attached image is."""
        images = self._store.images

        def page(number: int) -> StoredImage:
            name, png = render_pages(path, number, number)[0]
            return images.add_bytes(png, name)

        for number in range(first, last + 1):
            self._count_image(conversation_id, lambda number=number: page(number), None)

    def attach_image(
        self,
        conversation_id: int,
        source: str | bytes,
        name: str = "Pasted image.png",
        for_message: int | None = None,
    ) -> None:
        """Keep an image (a file's path, or pasted PNG bytes named `name`) in the image store
        and count what it costs the loaded model, on the worker; answers with `imageReady`
        (for the editor of `for_message`, or the composer), or a notice saying why it was
        refused. A model that cannot see images still gets it kept, counted as 0 tokens: the
        chip says so and sending waits for a model that sees."""
        images = self._store.images

        def keep() -> StoredImage:
            if isinstance(source, str):
                return images.add_file(source)
            return images.add_bytes(source, name)

        self._count_image(conversation_id, keep, for_message)

    def recount_images(self, conversation_id: int, kept: Sequence[StoredImage]) -> None:
        """Count a draft's images again for the model loaded since they were attached; each
        answers with `imageReady`, as when it was attached."""
        for image in kept:
            self._count_image(conversation_id, lambda image=image: image, None)

    def _count_image(
        self, conversation_id: int, image_of: Callable[[], StoredImage], for_message: int | None
    ) -> None:
        """On the worker: the image `image_of` keeps (or names), counted for the loaded model."""
        controller = self._controller
        if controller.model_state != ModelState.READY:
            controller.notice.emit("Images can be attached once the model has loaded.")
            return
        sees = model_sight(controller.model_info).sees
        detail = controller.image_detail()  # counted as replies will show it
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            params = {}

        def count(engine: EngineLike | None) -> ImageAttached:
            image = image_of()
            tokens = self._image_tokens(engine, image, detail) if sees and engine is not None else 0
            too_many = engine is not None and _over_context(image.name, tokens, engine, params)
            if too_many:
                raise ImageError(too_many)
            return ImageAttached(conversation_id, image, tokens, for_message)

        self._worker.call(
            count, on_done=controller.imageReady.emit, on_error=controller.notice.emit
        )

    def _image_tokens(self, engine: EngineLike, image: StoredImage, detail: int | None) -> int:
        """The tokens one image adds to a message at `detail`, as the model's processor splits
        it."""
        alone = message_content("", [image.as_record(0)], self._store.images, detail)
        return engine.count_prompt_tokens(
            [{"role": "user", "content": alone}]
        ) - engine.count_prompt_tokens([{"role": "user", "content": ""}])

    def _emit_token_count(self, count: TokenCount | None) -> None:
        if count is not None:
            self._controller.tokenCount.emit(count)


def _over_context(name: str, tokens: int, engine: EngineLike, params: dict[str, Any]) -> str:
    """Why an attachment of `tokens` cannot fit the chat's context ("" when it can): its own
    context length when it set one, else the model's."""
    limit = chat_context_length(engine.context_length, params)
    if not limit or tokens < limit:
        return ""
    whose = "this model's" if limit == engine.context_length else "this chat's"
    return f"{name} needs {tokens:,} tokens, more than {whose} context of {limit:,} tokens holds."
