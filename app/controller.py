"""The chat controller: turns a person's intents into store changes and worker requests.

It lives on the GUI thread and keeps the store and the engine in step: it builds the active path
from the store, asks the worker to generate, streams the reply into the store (status
"streaming", written at least once a second) and records the reply's stats on its message.

Every reply is bound to the message it began in: token updates carry their request id, and the
controller only ever writes them to that message, so switching conversation or branch, editing or
deleting while a reply streams can never put a token in the wrong place.

Signals carry plain values. Connect them to methods of GUI-thread QObjects (never lambdas):
`tokenCount` and `modelStatus` may be emitted from the worker thread, and a lambda receiver would
run there.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal, Slot

from app.reply_writer import ReplyWriter
from app.settings import Preferences
from app.store import Message, NotFoundError, Store, StoreError
from app.worker import EngineLike, GenerationRequest, InferenceWorker

DEFAULT_PARAMS: dict[str, Any] = {
    "temperature": 0.7,
    "top_p": 0.95,
    "top_k": 0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "max_tokens": 1024,
    "seed": None,
}

BUSY_MESSAGE = "A reply is still being written. Stop it (Esc) or wait for it to finish."

# Runs on the worker thread and returns the folder of the model to load at start-up (for the
# app: the last used model, or the embedded default imported on first start).
ModelResolver = Callable[[Callable[[str, int, int], None]], Path]


@dataclass
class _Reply:
    request_id: int
    conversation_id: int
    message_id: int
    writer: ReplyWriter
    detached: bool = False  # its message was deleted: drop what still arrives
    save_failed: bool = False  # the person has been told a write failed (once per reply)


class ChatController(QObject):
    conversationsChanged = Signal()  # the sidebar list changed
    conversationChanged = Signal(int)  # this conversation's tree or active path changed
    streamUpdated = Signal(object)  # {"conversation_id", "message_id", "text"} (whole text)
    busyChanged = Signal(bool)
    notice = Signal(str)  # a message for the person: a refusal or an error
    # {"state": "loading"|"ready"|"failed", "model_id", "message", "done", "total",
    #  "context_length"}
    modelStatus = Signal(object)
    memoryChanged = Signal(object)  # {"cache_bytes", "weights_bytes"}
    prefillProgress = Signal(object)  # {"message_id", "done", "total"}
    tokenCount = Signal(object)  # {"conversation_id", "count", "context_length"}

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        preferences: Preferences,
        model_resolver: ModelResolver | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.worker = worker
        self.preferences = preferences
        self._resolver = model_resolver
        self._ids = itertools.count(1)
        self._reply: _Reply | None = None
        self.model_info: dict[str, Any] | None = None
        self.model_state = "none"
        # The window shows this before start() runs, so a model about to load never reads as
        # "no model" for a frame.
        self.last_model_status: dict[str, Any] = _status("none")
        if model_resolver is not None:
            self.model_state = "loading"
            self.last_model_status = _status("loading", message="Preparing the model…")
        worker.loadStarted.connect(self._on_load_started)
        worker.loadProgress.connect(self._on_load_progress)
        worker.modelLoaded.connect(self._on_model_loaded)
        worker.loadFailed.connect(self._on_load_failed)
        worker.tokensReady.connect(self._on_tokens)
        worker.prefillProgress.connect(self._on_prefill)
        worker.generationFinished.connect(self._on_finished)
        worker.generationFailed.connect(self._on_failed)
        worker.memoryChanged.connect(self.memoryChanged)
        # Tokens may pause (a long prefill, a slow machine): write what has streamed anyway.
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(1000)
        self._flush_timer.timeout.connect(self._flush)

    # ---- model ------------------------------------------------------------------------------
    def start(self) -> None:
        """Resolve and load the start-up model in the background (the window is already up)."""
        if self._resolver is None:
            return
        resolver = self._resolver
        self._set_model_state("loading", message="Preparing the model…")

        def resolve(_engine: EngineLike | None) -> Path:
            return resolver(self._report_progress)

        self.worker.call(resolve, on_done=self.worker.load_model, on_error=self._resolve_failed)

    def load_model(self, path: str | Path) -> None:
        self.worker.load_model(path)

    def set_cache_budget(self, budget_bytes: int) -> None:
        self.preferences.cache_budget_bytes = budget_bytes
        self.worker.call(partial(_apply_budget, budget_bytes))

    def _report_progress(self, stage: str, done: int, total: int) -> None:
        self._set_model_state("loading", message=stage, done=done, total=total)

    def _resolve_failed(self, message: str) -> None:
        self._set_model_state("failed", message=message)

    def _set_model_state(self, state: str, **fields: Any) -> None:
        self.model_state = state
        self.last_model_status = _status(state, **fields)
        self.modelStatus.emit(self.last_model_status)

    @Slot(str)
    def _on_load_started(self, path: str) -> None:
        self.model_info = None
        self._set_model_state("loading", message=f"Loading {Path(path).name}…")

    @Slot(object)
    def _on_load_progress(self, progress: dict) -> None:
        self._set_model_state(
            "loading", message=progress["stage"], done=progress["done"], total=progress["total"]
        )

    @Slot(object)
    def _on_model_loaded(self, info: dict) -> None:
        self.model_info = info
        self.preferences.model_id = info.get("model_id")
        # Read here: the preferences' QSettings must not be used from the worker thread.
        self.worker.call(partial(_apply_budget, self.preferences.cache_budget_bytes))
        self._set_model_state(
            "ready",
            model_id=info.get("model_id"),
            message=f"{info.get('model_id')} is ready",
            context_length=info.get("context_length"),
        )

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self.model_info = None
        self._set_model_state("failed", message=message)
        self.notice.emit(f"The model could not be loaded: {message}")

    # ---- conversations ----------------------------------------------------------------------
    def new_conversation(self) -> int:
        model_id = self.model_info.get("model_id") if self.model_info else None
        conversation = self.store.create_conversation(model_id=model_id, params=DEFAULT_PARAMS)
        self.conversationsChanged.emit()
        return conversation.id

    def open_conversation(self, conversation_id: int) -> None:
        self.store.get_conversation(conversation_id)
        self.preferences.last_conversation_id = conversation_id

    def rename_conversation(self, conversation_id: int, title: str) -> None:
        if not title.strip():
            self.notice.emit("A conversation needs a title.")
            return
        self._guard(lambda: self.store.rename(conversation_id, title.strip()))
        self.conversationsChanged.emit()

    def set_pinned(self, conversation_id: int, pinned: bool) -> None:
        self._guard(lambda: self.store.set_pinned(conversation_id, pinned))
        self.conversationsChanged.emit()

    def delete_conversation(self, conversation_id: int) -> None:
        """Deleted softly: `restore_conversation` undoes it until the app closes."""
        reply = self._reply
        if reply is not None and reply.conversation_id == conversation_id:
            self.stop()
        self._guard(lambda: self.store.delete_conversation(conversation_id))
        self.worker.call(lambda engine: _forget(engine, conversation_id))
        self.conversationsChanged.emit()

    def fork_conversation(self, message_id: int) -> int | None:
        """A new conversation holding the path from the root to `message_id`, with the same
        settings; the original is untouched. Returns its id."""
        forked = self._guard(lambda: self.store.fork_conversation(message_id))
        if forked is None:
            return None
        self.conversationsChanged.emit()
        return forked.id

    def restore_conversation(self, conversation_id: int) -> None:
        self._guard(lambda: self.store.restore_conversation(conversation_id))
        self.conversationsChanged.emit()

    def update_settings(
        self,
        conversation_id: int,
        *,
        system_prompt: str | None = None,
        params: dict[str, Any] | None = None,
        model_id: str | None = None,
    ) -> None:
        changes: dict[str, Any] = {}
        if system_prompt is not None:
            changes["system_prompt"] = system_prompt
        if params is not None:
            changes["params"] = params
        if model_id is not None:
            changes["model_id"] = model_id
        self._guard(lambda: self.store.update_settings(conversation_id, **changes))
        self.conversationChanged.emit(conversation_id)

    # ---- messages ---------------------------------------------------------------------------
    def is_busy(self) -> bool:
        return self._reply is not None

    def streaming_message_id(self) -> int | None:
        return None if self._reply is None or self._reply.detached else self._reply.message_id

    def send(self, conversation_id: int, text: str) -> bool:
        """Add the person's message under the active leaf and generate a reply to it."""
        if not text.strip():
            self.notice.emit("Type a message first.")
            return False
        if not self._can_generate():
            return False
        conversation = self._guard(lambda: self.store.get_conversation(conversation_id))
        if conversation is None:
            return False
        user = self._guard(
            lambda: self.store.append_message(
                conversation_id, conversation.active_leaf_id, "user", text
            )
        )
        if user is None:
            return False
        self.conversationsChanged.emit()
        return self._start_reply(conversation_id, user.id)

    def regenerate(self, message_id: int) -> bool:
        """A new sibling reply to the same message; the old reply stays one click away."""
        if not self._can_generate():
            return False
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return False
        if message.role != "assistant" or message.parent_id is None:
            self.notice.emit("Only a reply can be regenerated.")
            return False
        return self._start_reply(message.conversation_id, message.parent_id)

    def edit(self, message_id: int, new_text: str) -> bool:
        """A new sibling of a user message with the new text, and a reply to it."""
        if not new_text.strip():
            self.notice.emit("An edited message cannot be empty.")
            return False
        if not self._can_generate():
            return False
        original = self._guard(lambda: self.store.get_message(message_id))
        if original is None:
            return False
        if original.role != "user":
            self.notice.emit("Only your own messages can be edited.")
            return False
        edited = self._guard(lambda: self.store.edit_message(message_id, new_text))
        if edited is None:
            return False
        return self._start_reply(edited.conversation_id, edited.id)

    def switch_sibling(self, message_id: int, delta: int) -> None:
        """Show the previous (-1) or next (+1) sibling branch, at its last visited leaf."""
        found = self._guard(lambda: self.store.siblings(message_id))
        if found is None:
            return
        siblings, index = found
        target = min(max(index + delta, 0), len(siblings) - 1)
        if target == index:
            return
        leaf = self._guard(lambda: self.store.switch_to_sibling(siblings[target].id))
        if leaf is not None:
            self.conversationChanged.emit(leaf.conversation_id)

    def delete_message(self, message_id: int) -> None:
        """Delete a message and every reply below it. A reply streaming inside that subtree is
        stopped first and its remaining tokens are dropped."""
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return
        doomed = self._reply
        if doomed is not None and not self._is_in_subtree(doomed.message_id, message_id):
            doomed = None
        if doomed is not None:
            self.worker.cancel(doomed.request_id)
        try:
            self.store.delete_message(message_id)
        except StoreError as exc:
            # Nothing was deleted: the stopped reply is still saved, with its text.
            self.notice.emit(str(exc))
            return
        if doomed is not None:
            doomed.detached = True
        self.conversationChanged.emit(message.conversation_id)

    def stop(self) -> None:
        """Stop the reply being written now; its text so far is kept, marked as stopped."""
        if self._reply is not None:
            self.worker.cancel(self._reply.request_id)

    def request_token_count(self, conversation_id: int, draft: str) -> None:
        """Count the prompt the draft would make (on the worker); answers with `tokenCount`."""
        if self.model_state != "ready":
            return
        try:
            path = self.store.active_path(conversation_id)
            messages = self._prompt_messages(conversation_id, path)
        except StoreError:
            return
        if draft.strip():
            messages.append({"role": "user", "content": draft})

        def count(engine: EngineLike | None) -> dict[str, Any] | None:
            if engine is None or not messages:
                return None
            return {
                "conversation_id": conversation_id,
                "count": engine.count_prompt_tokens(messages),
                "context_length": engine.context_length,
            }

        self.worker.call(count, on_done=self._emit_token_count)

    def _emit_token_count(self, payload: dict[str, Any] | None) -> None:
        if payload is not None:
            self.tokenCount.emit(payload)

    def shutdown(self, timeout_s: float = 2.0) -> bool:
        """Stop generation, save the partial reply, join the worker, close the store."""
        reply = self._reply
        if reply is not None:
            self.worker.cancel(reply.request_id)
        joined = self.worker.shutdown(timeout_s)
        # The worker's last tokens and its result are still queued for this object: deliver
        # them now (the event loop will not run again), so the whole partial text and its stats
        # are saved.
        QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)
        reply = self._reply
        if reply is not None and not reply.writer.done and not reply.detached:
            self._finish_writer(reply, "stopped")
        self._reply = None
        self._flush_timer.stop()
        self.store.close()
        return joined

    # ---- generation bookkeeping ---------------------------------------------------------------
    def _can_generate(self) -> bool:
        if self._reply is not None:
            self.notice.emit(BUSY_MESSAGE)
            return False
        if self.model_state != "ready":
            self.notice.emit("The model is not ready yet: wait for it to finish loading.")
            return False
        return True

    def _start_reply(self, conversation_id: int, parent_id: int) -> bool:
        conversation = self.store.get_conversation(conversation_id)
        params = {**DEFAULT_PARAMS, **conversation.params}
        model_id = self.model_info.get("model_id") if self.model_info else None
        reply = self._guard(
            lambda: self.store.begin_reply(conversation_id, parent_id, model_id, params)
        )
        if reply is None:
            return False
        path = self.store.active_path(conversation_id)[:-1]
        messages = self._prompt_messages(conversation_id, path)
        request_id = next(self._ids)
        self._reply = _Reply(
            request_id, conversation_id, reply.id, self.store.reply_writer(reply.id)
        )
        self.worker.submit(
            GenerationRequest(request_id, messages, params, conversation_id=conversation_id)
        )
        self._flush_timer.start()
        self.busyChanged.emit(True)
        self.conversationChanged.emit(conversation_id)
        return True

    def _prompt_messages(self, conversation_id: int, path: list[Message]) -> list[dict]:
        system = self.store.get_conversation(conversation_id).system_prompt
        messages = [{"role": "system", "content": system}] if system.strip() else []
        messages += [{"role": m.role, "content": m.content} for m in path]
        return messages

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
        try:
            reply.writer.append(payload["text"])
        except StoreError as exc:
            self._lose_reply(reply, exc)
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
        if not reply.detached:
            missing = payload["text"][len(reply.writer.text) :]
            if missing and payload["text"].startswith(reply.writer.text):
                reply.writer.append(missing)
            status = "stopped" if payload["finish_reason"] == "cancelled" else "complete"
            stats = {**payload["stats"], "finish_reason": payload["finish_reason"]}
            self._finish_writer(reply, status, stats=stats)
        self._end(reply)

    @Slot(object)
    def _on_failed(self, payload: dict) -> None:
        reply = self._current(payload["request_id"])
        if reply is None:
            return
        if not reply.detached:
            self._finish_writer(reply, "error", error=payload["message"])
        self.notice.emit(payload["message"])
        self._end(reply)

    def _finish_writer(self, reply: _Reply, status: str, **kwargs: Any) -> None:
        try:
            reply.writer.finish(status, **kwargs)
        except StoreError as exc:
            self._lose_reply(reply, exc)

    def _lose_reply(self, reply: _Reply, exc: StoreError) -> None:
        """The reply's message went away (deleted), or the disk refused the write: then the
        writer keeps the text and the next flush, the finish or `Store.close` writes it."""
        if isinstance(exc, NotFoundError):
            reply.detached = True
        elif not reply.save_failed:
            reply.save_failed = True
            self.notice.emit(f"The reply could not be saved: {exc}")

    def _end(self, reply: _Reply) -> None:
        self._reply = None
        self._flush_timer.stop()
        self.busyChanged.emit(False)
        self.conversationChanged.emit(reply.conversation_id)
        self.conversationsChanged.emit()

    @Slot()
    def _flush(self) -> None:
        reply = self._reply
        if reply is None or reply.detached:
            return
        try:
            reply.writer.flush()
        except StoreError as exc:
            self._lose_reply(reply, exc)

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        """Run a store action; a refusal becomes a notice for the person instead of a crash."""
        try:
            return action()
        except StoreError as exc:
            self.notice.emit(str(exc))
            return None


def _apply_budget(budget_bytes: int, engine: EngineLike | None) -> None:
    if engine is not None:
        engine.cache_budget_bytes = budget_bytes


def _forget(engine: EngineLike | None, conversation_id: int) -> None:
    """Free a deleted conversation's caches (an undo only costs a recompute, never text)."""
    if engine is not None:
        engine.forget(conversation_id)


def _status(state: str, **fields: Any) -> dict[str, Any]:
    return {"state": state, "model_id": None, "message": "", "done": 0, "total": 0, **fields}
