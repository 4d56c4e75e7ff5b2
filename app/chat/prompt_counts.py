"""Token counts for the composer, made on the worker: how many tokens the prompt a draft would
make takes (with its attached files and images), and what a file or an image to attach costs,
refusing one the model's context cannot hold. Answers come back through the controller's
`tokenCount` and `attachmentReady` signals, or its `notice`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import SignalInstance

from app.generation.attachments import AttachmentError, read_attachment, wrap_file
from app.generation.prompt_messages import message_content, prompt_messages
from app.generation.think_settings import template_kwargs
from app.images.store import ImageError
from app.settings import chat_context_length
from app.store.conversations import StoreError

if TYPE_CHECKING:
    from app.generation.worker import EngineLike, InferenceWorker
    from app.store.conversations import Store


class CountingHost(Protocol):
    """What the counts need of the chat controller that owns them (its state and signals)."""

    store: Store
    worker: InferenceWorker
    notice: SignalInstance
    tokenCount: SignalInstance
    attachmentReady: SignalInstance

    @property
    def model_state(self) -> str: ...

    @property
    def model_info(self) -> dict[str, Any] | None: ...

    def remote_model(self, conversation_id: int) -> str | None: ...

    def overflow_policy(self, conversation_id: int) -> str: ...


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
        if controller.model_state != "ready" or controller.remote_model(conversation_id):
            return  # a remote model's tokenizer is not here to count with
        try:
            conversation = self._store.get_conversation(conversation_id)
            path = self._store.active_path(conversation_id)
            messages = prompt_messages(self._store, conversation_id, path)
            overflow = controller.overflow_policy(conversation_id)
        except StoreError:
            return
        if draft.strip() or attachments:
            content = message_content(draft, attachments or [], self._store.images)
            messages.append({"role": "user", "content": content})
        kwargs = template_kwargs(controller.model_info, conversation.params)
        params = conversation.params

        def count(engine: EngineLike | None) -> dict[str, Any] | None:
            if engine is None or not messages:
                return None
            return {
                "conversation_id": conversation_id,
                "count": engine.count_prompt_tokens(messages, kwargs),
                # The chat's own context length, when it set one below the model's.
                "context_length": chat_context_length(engine.context_length, params),
                "overflow": overflow,
            }

        self._worker.call(count, on_done=self._emit_token_count)

    def attach_file(self, conversation_id: int, path: str) -> None:
        """Read a file and count its tokens on the worker (after any reply being written);
        answers with `attachmentReady`, or a notice saying why the file was refused (not
        text, unreadable, or more tokens than the chat's context holds: its own context length
        when it set one, else the model's)."""
        controller = self._controller
        if controller.model_state != "ready":
            controller.notice.emit("Files can be attached once the model has loaded.")
            return
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            params = {}

        def read(engine: EngineLike | None) -> dict[str, Any]:
            attached = read_attachment(path)
            content = wrap_file(attached.name, attached.text)
            tokens = _tokens(engine, attached.name, content, params)
            return {"conversation_id": conversation_id, "attachment": attached.as_record(tokens)}

        self._worker.call(
            read, on_done=controller.attachmentReady.emit, on_error=controller.notice.emit
        )

    def attach_image(
        self, conversation_id: int, path: str | None = None, data: bytes | None = None,
        name: str = "pasted image.png",
    ) -> None:
        """Keep an image (a file at `path`, or pasted `data` named `name`) in the image store
        and count what it costs the model, on the worker (Pillow's checks of a large photo take
        a moment); answers with `attachmentReady` and the image's record, or a notice saying
        why it was refused (not an image the app takes, or a model that takes no images: the
        engine's own words)."""
        controller = self._controller
        if controller.model_state != "ready":
            controller.notice.emit("Images can be attached once the model has loaded.")
            return
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            params = {}
        images = self._store.images

        def read(engine: EngineLike | None) -> dict[str, Any]:
            try:
                if path is not None:
                    image = images.add_file(path)
                else:
                    image = images.add_bytes(data or b"", name)
            except ImageError as exc:
                raise AttachmentError(str(exc)) from exc
            part = {"type": "image", "image": str(images.path(image.sha256))}
            tokens = _tokens(engine, image.name, [part, {"type": "text", "text": ""}], params)
            return {"conversation_id": conversation_id, "attachment": image.as_record(tokens)}

        self._worker.call(
            read, on_done=controller.attachmentReady.emit, on_error=controller.notice.emit
        )

    def _emit_token_count(self, payload: dict[str, Any] | None) -> None:
        if payload is not None:
            self._controller.tokenCount.emit(payload)



def _tokens(
    engine: EngineLike | None, name: str, content: str | list[dict[str, Any]],
    params: dict[str, Any],
) -> int:
    """What an attachment (as the prompt shows it, `content`) adds to a user message, refused
    (AttachmentError) when the chat's context cannot hold it: its own context length when it
    set one, else the model's."""
    if engine is None:
        raise AttachmentError("Files can be attached once the model has loaded.")
    bare = [{"role": "user", "content": ""}]
    tokens = engine.count_prompt_tokens([{"role": "user", "content": content}])
    tokens -= engine.count_prompt_tokens(bare)
    limit = chat_context_length(engine.context_length, params)
    if limit and tokens >= limit:
        whose = "this model's" if limit == engine.context_length else "this chat's"
        raise AttachmentError(
            f"{name} needs {tokens:,} tokens, more than {whose} context of {limit:,} tokens holds."
        )
    return tokens
