"""Token counts for the composer, made on the worker: how many tokens the prompt a draft would
make takes (with its attached files and images), and what a file or an image to attach costs,
refusing one the model's context cannot hold. A PDF with no text layer is offered as page
images instead (`scannedPdf`, with what a page costs), and the pages chosen are rendered, kept
and counted one per worker call, so neither the window nor a reply waits for the whole document.
Answers come back through its own `tokenCount`, `attachmentReady`, `scannedPdf` and
`imageReady` signals, or its `notice`, which the controller relays as its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

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
from app.generation.knowledge_retrieval import turn_budget
from app.generation.model_session import ModelState
from app.generation.prompt_messages import message_content, prompt_messages
from app.generation.think_settings import template_kwargs
from app.images.pdf_pages import outline, render_pages
from app.images.store import ImageError, StoredImage
from app.settings import OVERFLOW_POLICIES, chat_context_length
from app.store.conversations import StoreError

if TYPE_CHECKING:
    from app.generation.model_session import ModelSession
    from app.generation.worker import EngineLike, InferenceWorker
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
    # The most the knowledge retrieved when the draft is sent may add (its budget; 0 for a chat
    # that reads none): excerpts are only known once retrieved, and counted exactly from then.
    knowledge_tokens: int = 0


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


class PromptCounts(QObject):
    """The composer's counts and attachments, answered through its own signals (the controller
    relays them as its own)."""

    notice = Signal(str)  # why a file or an image could not be attached
    tokenCount = Signal(TokenCount)
    attachmentReady = Signal(FileAttached)
    scannedPdf = Signal(ScannedPdf)
    imageReady = Signal(ImageAttached)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        session: ModelSession,
        remote_model: Callable[[int], str | None],
        image_detail: Callable[[], int | None],
        default_overflow: Callable[[], str],
        parent: QObject | None = None,
        knowledge_setting: Callable[[int], int | None] = lambda _cid: None,
    ) -> None:
        """`remote_model(conversation_id)` names a chat's remote model (None: the local one);
        `image_detail()` is the loaded model's; `default_overflow()` is Preferences';
        `knowledge_setting(conversation_id)` the budget setting of a chat that reads knowledge
        (0: a quarter of the context), None for one that reads none."""
        super().__init__(parent)
        self._knowledge_setting = knowledge_setting
        self._store = store
        self._worker = worker
        self._session = session
        self._remote_model = remote_model
        self._image_detail = image_detail
        self._default_overflow = default_overflow

    def overflow_policy(self, conversation_id: int) -> str:
        """The conversation's own overflow policy, else the default from Preferences."""
        policy = self._store.get_conversation(conversation_id).params.get("overflow")
        return policy if policy in OVERFLOW_POLICIES else self._default_overflow()

    def request_token_count(
        self,
        conversation_id: int,
        draft: str,
        attachments: list[dict[str, Any]] | None = None,
    ) -> None:
        """Count the prompt the draft and its attached files would make (on the worker);
        answers with `tokenCount`."""
        if self._session.model_state != ModelState.READY or self._remote_model(conversation_id):
            return  # a remote model's tokenizer is not here to count with
        try:
            conversation = self._store.get_conversation(conversation_id)
            path = self._store.active_path(conversation_id)
            detail = self._image_detail()
            messages = prompt_messages(self._store, conversation_id, path, detail)
            overflow = self.overflow_policy(conversation_id)
        except StoreError:
            return
        if draft.strip() or attachments:
            content = message_content(draft, attachments or [], self._store.images, detail)
            messages.append({"role": "user", "content": content})
        kwargs = template_kwargs(self._session.model_info, conversation.params)
        params = conversation.params
        knowledge = self._knowledge_setting(conversation_id) if draft.strip() else None

        def count(engine: EngineLike | None) -> TokenCount | None:
            if engine is None or not messages:
                return None
            context = chat_context_length(engine.context_length, params)
            return TokenCount(
                conversation_id,
                engine.count_prompt_tokens(messages, kwargs),
                context,
                overflow,
                0 if knowledge is None else turn_budget(knowledge, context),
            )

        self._worker.call(count, on_done=self._emit_token_count)

    def attach_file(self, conversation_id: int, path: str) -> None:
        """Read a file and count its tokens on the worker (after any reply being written);
        answers with `attachmentReady`, `scannedPdf` for a PDF with no text layer, or a notice
        saying why the file was refused (not text, unreadable, a scanned PDF a text-only model
        cannot read, or more tokens than the chat's context holds: its own context length
        when it set one, else the model's)."""
        if self._session.model_state != ModelState.READY:
            self.notice.emit("Files can be attached once the model has loaded.")
            return
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            params = {}
        sight, detail = model_sight(self._session.model_info), self._image_detail()

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
            (self.scannedPdf if scanned else self.attachmentReady).emit(result)

        self._worker.call(read, on_done=done, on_error=self.notice.emit)

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
        if self._session.model_state != ModelState.READY:
            self.notice.emit("Images can be attached once the model has loaded.")
            return
        sees = model_sight(self._session.model_info).sees
        detail = self._image_detail()  # counted as replies will show it
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

        self._worker.call(count, on_done=self.imageReady.emit, on_error=self.notice.emit)

    def _image_tokens(self, engine: EngineLike, image: StoredImage, detail: int | None) -> int:
        """The tokens one image adds to a message at `detail`, as the model's processor splits
        it."""
        alone = message_content("", [image.as_record(0)], self._store.images, detail)
        return engine.count_prompt_tokens(
            [{"role": "user", "content": alone}]
        ) - engine.count_prompt_tokens([{"role": "user", "content": ""}])

    def _emit_token_count(self, count: TokenCount | None) -> None:
        if count is not None:
            self.tokenCount.emit(count)


def _over_context(name: str, tokens: int, engine: EngineLike, params: dict[str, Any]) -> str:
    """Why an attachment of `tokens` cannot fit the chat's context ("" when it can): its own
    context length when it set one, else the model's."""
    limit = chat_context_length(engine.context_length, params)
    if not limit or tokens < limit:
        return ""
    whose = "this model's" if limit == engine.context_length else "this chat's"
    return f"{name} needs {tokens:,} tokens, more than {whose} context of {limit:,} tokens holds."
