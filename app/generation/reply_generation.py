"""The reply being generated: at most one at a time, bound to the message it began in.

It asks a backend to generate, streams the tokens into that message (status "streaming", written
at least once a second even while tokens pause) and finishes it with its stats, as stopped, or as
an error. Token updates carry their request id and are only ever written to their own message, so
switching conversation or branch, editing or deleting while a reply streams can never put a token
in the wrong place.

A reply whose final write fails (a full disk) is not dropped: it ends (the app is no longer busy),
its whole text stays on screen (re-sent as a stream update), and its final write is retried each
second; what is still unsaved at close goes to the store's recovery file.

A reply comes from a `ReplyBackend`: the inference worker (a local model) or `RemoteBackend` (a
server). Request ids are unique across backends, so every backend's signals can stay connected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal, Slot

from app.generation.prompt_messages import ImageDetailFor, missing_image, no_detail, prompt_messages
from app.generation.reply_events import ContextFull, ReplyPrefill, StreamUpdate
from app.generation.worker import GenerationRequest
from app.generation.worker_errors import FailureKind, WorkerFailure
from app.generation.worker_events import GenerationFinished, PrefillProgress, TokensReady
from app.library.draft_choice import with_draft
from app.qt_signal import QtSignal
from app.store.compaction_records import summary_stats
from app.store.conversations import NotFoundError, Store, StoreError
from app.store.records import Status
from app.store.reply_writer import ReplyWriter

DEFAULT_PARAMS: dict[str, Any] = {
    "temperature": 0.7,
    "top_p": 0.95,
    "top_k": 0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "max_tokens": 1024,
    "seed": None,
    # Same reply, often faster: the engine drafts tokens from the conversation itself.
    "speculation": "prompt_lookup",
}


class ReplyBackend(Protocol):
    """What generates replies, with the signals of `InferenceWorker`: `tokensReady` carries
    TokensReady, `prefillProgress` PrefillProgress, `generationFinished` GenerationFinished
    (`app.generation.worker_events`) and `generationFailed` a WorkerFailure with its request
    id (`app.generation.worker_errors`)."""

    tokensReady: Final[QtSignal]
    prefillProgress: Final[QtSignal]
    generationFinished: Final[QtSignal]
    generationFailed: Final[QtSignal]

    def submit(self, request: GenerationRequest) -> None: ...
    def cancel(self, request_id: int | None = None) -> None: ...


@dataclass
class _Reply:
    request_id: int
    conversation_id: int
    message_id: int
    writer: ReplyWriter
    backend: ReplyBackend
    detached: bool = False  # its message was deleted: drop what still arrives
    continued: str = ""  # the text a continued reply started with (the model's is after it)
    save_failed: bool = False  # the person has been told a write failed (once per reply)
    # Each prompt message's id (None: the system prompt): what the engine's dropped indexes were.
    prompt_ids: list[int | None] = field(default_factory=list)
    called_tools: bool = False  # it ended with tool calls, stored with it
    summary: dict[str, Any] = field(default_factory=dict)  # app.store.compaction_records


class ReplyGeneration(QObject):
    streamUpdated = Signal(StreamUpdate)
    prefillProgress = Signal(ReplyPrefill)
    busyChanged = Signal(bool)
    ended = Signal(int)  # the conversation whose reply is finished, stopped or failed
    notice = Signal(str)  # a failed generation or write: a message for the person
    toolCallsMade = Signal(int, int)  # (conversation_id, message_id): a reply called tools
    contextFull = Signal(ContextFull)

    def __init__(
        self,
        store: Store,
        backends: Sequence[ReplyBackend],
        default_overflow: Callable[[], str],
        request_ids: Callable[[], int],
        parent: QObject | None = None,
        detail_for: ImageDetailFor = no_detail,
    ) -> None:
        """`detail_for(model_id)` is the image detail each reply's model is given."""
        super().__init__(parent)
        self.store = store
        self._detail_for = detail_for
        self._default_overflow = default_overflow
        self._next_request_id = request_ids
        self._reply: _Reply | None = None
        for backend in backends:
            backend.tokensReady.connect(self._on_tokens)
            backend.prefillProgress.connect(self._on_prefill)
            backend.generationFinished.connect(self._on_finished)
            backend.generationFailed.connect(self._on_failed)
        # Tokens may pause (a long prefill, a slow machine): write what has streamed anyway.
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(1000)
        self._flush_timer.timeout.connect(self._flush)
        # Replies ended whose final write failed: retried until the store takes them.
        self._unsaved: list[_Reply] = []
        self._retry_timer = QTimer(self)
        self._retry_timer.setInterval(1000)
        self._retry_timer.timeout.connect(self._retry_unsaved)

    def is_busy(self) -> bool:
        return self._reply is not None

    def streaming_message_id(self) -> int | None:
        return None if self._reply is None or self._reply.detached else self._reply.message_id

    def is_streaming_in(self, conversation_id: int) -> bool:
        return self._reply is not None and self._reply.conversation_id == conversation_id

    def start(
        self,
        conversation_id: int,
        parent_id: int,
        model_id: str | None,
        backend: ReplyBackend,
        template_kwargs: dict[str, Any] | None = None,
        continued: str = "",
        draft_model: Path | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> int:
        """Begin a reply to `parent_id` and ask `backend` for it; returns the reply's message
        id. With `continued` (a stopped or cut-off reply's text), the new reply starts with that
        text and the model goes on writing it. `draft_model` is the folder of the model that guesses
        ahead for it (app.library.draft_choice). Raises StoreError when the reply could not be begun
        (nothing was asked then)."""
        conversation = self.store.get_conversation(conversation_id)
        params = with_draft(
            {**DEFAULT_PARAMS, "overflow": self._default_overflow(), **conversation.params},
            draft_model,
        )
        reply = self.store.begin_reply(conversation_id, parent_id, model_id, params)
        path = self.store.active_path(conversation_id)[:-1]
        messages = prompt_messages(self.store, conversation_id, path, self._detail_for(model_id))
        refused = missing_image(self.store, path)
        writer = self.store.reply_writer(reply.id)
        if continued:
            messages.append({"role": "assistant", "content": continued})
            writer.append(continued)
        request_id = self._next_request_id()
        system = [None] * (len(messages) - len(path) - (1 if continued else 0))
        self._reply = _Reply(
            request_id,
            conversation_id,
            reply.id,
            writer,
            backend,
            prompt_ids=[*system, *(m.id for m in path), *([None] if continued else [])],
            continued=continued,
            summary=summary_stats(path),
        )
        if refused is None:
            request = GenerationRequest(
                request_id,
                messages,
                params,
                conversation_id=conversation_id,
                model_id=model_id,
                template_kwargs=dict(template_kwargs or {}),
                continue_reply=bool(continued),
                draft_model=draft_model,
                tools=list(tools or ()),
            )
            backend.submit(request)
        self._flush_timer.start()
        self.busyChanged.emit(True)
        if refused is not None:
            # Ended as the engine ends a prompt it refuses: an error reply, and a notice.
            self._on_failed(WorkerFailure(FailureKind.INVALID_REQUEST, refused, request_id))
        return reply.id

    def stop(self) -> None:
        """Stop the reply being written now; its text so far is kept, marked as stopped (a
        reply stopped before any text is removed)."""
        if self._reply is not None:
            self._reply.backend.cancel(self._reply.request_id)

    def delete_subtree(self, message_id: int) -> None:
        """Delete a message and every reply below it. A reply streaming inside that subtree is
        stopped first and its remaining tokens are dropped. Raises StoreError when nothing was
        deleted: the stopped reply is then still saved, with its text."""
        doomed = self._reply
        if doomed is not None and not self._is_in_subtree(doomed.message_id, message_id):
            doomed = None
        if doomed is not None:
            doomed.backend.cancel(doomed.request_id)
        self.store.delete_message(message_id)
        if doomed is not None:
            doomed.detached = True

    def save_after_shutdown(self) -> None:
        """Once the worker has stopped: deliver its last tokens and result, still queued for
        this object (the event loop will not run again), so the whole partial text and its
        stats are saved. A write still refused is left to `Store.close`."""
        QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)
        reply = self._reply
        if reply is not None and not reply.writer.done and not reply.detached:
            self._finish_writer(reply, "stopped")
        self._reply = None
        self._flush_timer.stop()
        # `Store.close` retries what is still unsaved, and keeps what it cannot write.
        self._retry_timer.stop()

    def _still_streaming(self, message_id: int) -> bool:
        try:
            return self.store.get_message(message_id).status == "streaming"
        except NotFoundError:
            return False
        except StoreError:
            return True  # cannot tell: keep the text

    def _is_in_subtree(self, message_id: int, root_id: int) -> bool:
        try:
            return any(m.id == root_id for m in self.store.path_to(message_id))
        except NotFoundError:
            return False

    def _current(self, request_id: int | None) -> _Reply | None:
        reply = self._reply
        return reply if reply is not None and reply.request_id == request_id else None

    @Slot(object)
    def _on_tokens(self, tokens: TokensReady) -> None:
        reply = self._current(tokens.request_id)
        if reply is None or reply.detached:
            return
        self._append(reply, tokens.text, tokens.reasoning)
        if reply.detached:
            return
        text = reply.writer.text
        # A call's markup, or what may become a marker, never shows while it is written.
        shown = text[: len(text) - tokens.hidden] if tokens.hidden else text
        self.streamUpdated.emit(
            StreamUpdate(
                reply.conversation_id,
                reply.message_id,
                shown,
                reply.writer.reasoning,
                tokens.thinking,
                tokens.calling,
            )
        )

    @Slot(object)
    def _on_prefill(self, progress: PrefillProgress) -> None:
        reply = self._current(progress.request_id)
        if reply is not None and not reply.detached:
            self.prefillProgress.emit(ReplyPrefill(reply.message_id, progress.done, progress.total))

    @Slot(object)
    def _on_finished(self, finished: GenerationFinished) -> None:
        reply = self._current(finished.request_id)
        if reply is None:
            return
        try:
            if not reply.detached:
                streamed = reply.writer.text[len(reply.continued) :]
                missing = finished.text[len(streamed) :]
                if missing and finished.text.startswith(streamed):
                    self._append(reply, missing)
                    streamed = finished.text
                if finished.finish_reason == "cancelled" and not streamed:
                    self._drop_empty(reply)
                else:
                    status = "stopped" if finished.finish_reason == "cancelled" else "complete"
                    stats = {**finished.stats, **reply.summary}
                    stats["finish_reason"] = finished.finish_reason
                    dropped = [reply.prompt_ids[i] for i in finished.dropped_messages]
                    if dropped:
                        stats["dropped_message_ids"] = [i for i in dropped if i is not None]
                    calls = list(finished.tool_calls)
                    # A reply that called tools: its answer without the calls' markup, its calls.
                    tool_kwargs: dict[str, Any] = {}
                    if calls and status == "complete":
                        answer = reply.continued + finished.text
                        tool_kwargs = {"content": answer, "tool_calls": calls}
                    self._finish_writer(
                        reply,
                        status,
                        stats=stats,
                        reasoning=finished.reasoning,
                        provenance=finished.provenance,
                        **tool_kwargs,
                    )
                    reply.called_tools = bool(tool_kwargs) and not reply.detached
        finally:
            self._end(reply)  # whatever went wrong above, the app is not left busy
        if reply.called_tools and reply not in self._unsaved:
            self.toolCallsMade.emit(reply.conversation_id, reply.message_id)

    @Slot(object)
    def _on_failed(self, failure: WorkerFailure) -> None:
        reply = self._current(failure.request_id)
        if reply is None:
            return
        try:
            if not reply.detached:
                self._finish_writer(reply, failure.reply_status, error=failure.message)
            if failure.kind is FailureKind.CONTEXT_FULL:
                self.contextFull.emit(ContextFull(reply.conversation_id, failure.message))
            else:
                self.notice.emit(failure.message)
        finally:
            self._end(reply)

    def _drop_empty(self, reply: _Reply) -> None:
        """A reply stopped before any new text says nothing: it is removed, not kept as an empty
        message or a copy (the previous version shows again)."""
        try:
            self.store.delete_message(reply.message_id)
        except StoreError:
            self._finish_writer(reply, "stopped")  # cannot delete: keep it marked as stopped
        else:
            reply.detached = True

    def _append(self, reply: _Reply, text: str, reasoning: str = "") -> None:
        try:
            reply.writer.append(text, reasoning)
        except StoreError as exc:
            self._lose_reply(reply, exc)

    def _finish_writer(self, reply: _Reply, status: Status, **kwargs: Any) -> None:
        try:
            reply.writer.finish(status, **kwargs)
        except StoreError as exc:
            self._lose_reply(reply, exc)
            if not reply.detached:
                self._unsaved.append(reply)
                self._retry_timer.start()

    def _lose_reply(self, reply: _Reply, exc: StoreError) -> None:
        """The reply's message went away (deleted), or the disk refused the write: then the
        writer keeps the text and the next flush, a retried finish or `Store.close` writes it."""
        if isinstance(exc, NotFoundError):
            reply.detached = True
        elif not reply.save_failed:
            reply.save_failed = True
            self.notice.emit(f"The reply could not be saved: {exc}")

    def _end(self, reply: _Reply) -> None:
        self._reply = None
        self._flush_timer.stop()
        self.busyChanged.emit(False)
        self.ended.emit(reply.conversation_id)
        if reply in self._unsaved:
            self._show_unsaved(reply)

    def _show_unsaved(self, reply: _Reply) -> None:
        """The store still has the text as of its last successful write: keep the whole of it on
        screen until it is saved."""
        self.streamUpdated.emit(
            StreamUpdate(reply.conversation_id, reply.message_id, reply.writer.text)
        )

    @Slot()
    def _retry_unsaved(self) -> None:
        for reply in list(self._unsaved):
            try:
                reply.writer.retry_finish()
            except StoreError:
                if self._still_streaming(reply.message_id):
                    self._show_unsaved(reply)
                else:
                    self._unsaved.remove(reply)  # deleted, or finished elsewhere, meanwhile
            else:
                self._unsaved.remove(reply)
                self.notice.emit("The reply that could not be saved has now been saved.")
                self.ended.emit(reply.conversation_id)
        if not self._unsaved:
            self._retry_timer.stop()

    @Slot()
    def _flush(self) -> None:
        reply = self._reply
        if reply is None or reply.detached:
            return
        try:
            reply.writer.flush()
        except StoreError as exc:
            self._lose_reply(reply, exc)
