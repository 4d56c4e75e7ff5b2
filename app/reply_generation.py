"""The reply being generated: at most one at a time, bound to the message it began in.

It asks the worker to generate, streams the tokens into that message (status "streaming", written
at least once a second even while tokens pause) and finishes it with its stats, as stopped, or as
an error. Token updates carry their request id and are only ever written to their own message, so
switching conversation or branch, editing or deleting while a reply streams can never put a token
in the wrong place.

A reply whose final write fails (a full disk) is not dropped: it ends (the app is no longer busy),
its whole text stays on screen (re-sent as a stream update), and its final write is retried each
second; what is still unsaved at close goes to the store's recovery file.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal, Slot

from app.reply_writer import ReplyWriter
from app.store import Message, NotFoundError, Store, StoreError
from app.worker import GenerationRequest, InferenceWorker

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


@dataclass
class _Reply:
    request_id: int
    conversation_id: int
    message_id: int
    writer: ReplyWriter
    detached: bool = False  # its message was deleted: drop what still arrives
    save_failed: bool = False  # the person has been told a write failed (once per reply)


class ReplyGeneration(QObject):
    streamUpdated = Signal(object)  # {"conversation_id", "message_id", "text"} (whole text)
    prefillProgress = Signal(object)  # {"message_id", "done", "total"}
    busyChanged = Signal(bool)
    ended = Signal(int)  # the conversation whose reply is finished, stopped or failed
    notice = Signal(str)  # a failed generation or write: a message for the person

    def __init__(
        self, store: Store, worker: InferenceWorker, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.worker = worker
        self._ids = itertools.count(1)
        self._reply: _Reply | None = None
        worker.tokensReady.connect(self._on_tokens)
        worker.prefillProgress.connect(self._on_prefill)
        worker.generationFinished.connect(self._on_finished)
        worker.generationFailed.connect(self._on_failed)
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

    def start(self, conversation_id: int, parent_id: int, model_id: str | None) -> int:
        """Begin a reply to `parent_id` and ask the worker for it; returns the reply's message
        id. Raises StoreError when the reply could not be begun (nothing was asked then)."""
        conversation = self.store.get_conversation(conversation_id)
        params = {**DEFAULT_PARAMS, **conversation.params}
        reply = self.store.begin_reply(conversation_id, parent_id, model_id, params)
        path = self.store.active_path(conversation_id)[:-1]
        messages = prompt_messages(self.store, conversation_id, path)
        request_id = next(self._ids)
        self._reply = _Reply(
            request_id, conversation_id, reply.id, self.store.reply_writer(reply.id)
        )
        self.worker.submit(
            GenerationRequest(request_id, messages, params, conversation_id=conversation_id)
        )
        self._flush_timer.start()
        self.busyChanged.emit(True)
        return reply.id

    def stop(self) -> None:
        """Stop the reply being written now; its text so far is kept, marked as stopped."""
        if self._reply is not None:
            self.worker.cancel(self._reply.request_id)

    def delete_subtree(self, message_id: int) -> None:
        """Delete a message and every reply below it. A reply streaming inside that subtree is
        stopped first and its remaining tokens are dropped. Raises StoreError when nothing was
        deleted: the stopped reply is then still saved, with its text."""
        doomed = self._reply
        if doomed is not None and not self._is_in_subtree(doomed.message_id, message_id):
            doomed = None
        if doomed is not None:
            self.worker.cancel(doomed.request_id)
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
        current: int | None = message_id
        while current is not None:
            if current == root_id:
                return True
            try:
                current = self.store.get_message(current).parent_id
            except NotFoundError:
                return False
        return False

    def _current(self, request_id: int) -> _Reply | None:
        reply = self._reply
        return reply if reply is not None and reply.request_id == request_id else None

    @Slot(object)
    def _on_tokens(self, payload: dict) -> None:
        reply = self._current(payload["request_id"])
        if reply is None or reply.detached:
            return
        self._append(reply, payload["text"])
        if reply.detached:
            return
        self.streamUpdated.emit(
            {
                "conversation_id": reply.conversation_id,
                "message_id": reply.message_id,
                "text": reply.writer.text,
            }
        )

    @Slot(object)
    def _on_prefill(self, payload: dict) -> None:
        reply = self._current(payload["request_id"])
        if reply is not None and not reply.detached:
            self.prefillProgress.emit(
                {"message_id": reply.message_id, "done": payload["done"], "total": payload["total"]}
            )

    @Slot(object)
    def _on_finished(self, payload: dict) -> None:
        reply = self._current(payload["request_id"])
        if reply is None:
            return
        try:
            if not reply.detached:
                missing = payload["text"][len(reply.writer.text) :]
                if missing and payload["text"].startswith(reply.writer.text):
                    self._append(reply, missing)
                status = "stopped" if payload["finish_reason"] == "cancelled" else "complete"
                stats = {**payload["stats"], "finish_reason": payload["finish_reason"]}
                self._finish_writer(reply, status, stats=stats)
        finally:
            self._end(reply)  # whatever went wrong above, the app is not left busy

    @Slot(object)
    def _on_failed(self, payload: dict) -> None:
        reply = self._current(payload["request_id"])
        if reply is None:
            return
        try:
            if not reply.detached:
                self._finish_writer(reply, "error", error=payload["message"])
            self.notice.emit(payload["message"])
        finally:
            self._end(reply)

    def _append(self, reply: _Reply, text: str) -> None:
        try:
            reply.writer.append(text)
        except StoreError as exc:
            self._lose_reply(reply, exc)

    def _finish_writer(self, reply: _Reply, status: str, **kwargs: Any) -> None:
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
            {
                "conversation_id": reply.conversation_id,
                "message_id": reply.message_id,
                "text": reply.writer.text,
            }
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


def prompt_messages(store: Store, conversation_id: int, path: list[Message]) -> list[dict]:
    """The chat messages for the model: the conversation's system prompt, if any, then `path`."""
    system = store.get_conversation(conversation_id).system_prompt
    messages = [{"role": "system", "content": system}] if system.strip() else []
    messages += [{"role": m.role, "content": m.content} for m in path]
    return messages
