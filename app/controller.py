"""The chat controller: turns a person's intents into store changes and worker requests.

It lives on the GUI thread and is the one object the window talks to: every change to a
conversation goes through it, so its change signals and the worker's caches stay in step with the
store. It is composed of the model session (`app.model_session`: which model is loaded, and its
status) and the reply being generated (`app.reply_generation`: streaming a reply into its
message); this module holds the conversations and the person's message actions.

Signals carry plain values. Connect them to methods of GUI-thread QObjects (never lambdas):
`tokenCount` may be emitted from the worker thread, and a lambda receiver would run there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from app.model_session import ModelResolver, ModelSession
from app.reply_generation import DEFAULT_PARAMS, ReplyGeneration, prompt_messages
from app.settings import Preferences
from app.store import Conversation, NotFoundError, Store, StoreError
from app.worker import EngineLike, InferenceWorker

__all__ = ["BUSY_MESSAGE", "DEFAULT_PARAMS", "ChatController", "ModelResolver"]

BUSY_MESSAGE = "A reply is still being written. Stop it (Esc) or wait for it to finish."


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
    conversationOpened = Signal(int)  # the window shows this conversation now
    closing = Signal()  # the store closes next: save what is still only in memory (a draft)

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
        self._session = ModelSession(worker, preferences, model_resolver, parent=self)
        self._session.modelStatus.connect(self.modelStatus)
        self._session.notice.connect(self.notice)
        self._generation = ReplyGeneration(store, worker, parent=self)
        self._generation.streamUpdated.connect(self.streamUpdated)
        self._generation.prefillProgress.connect(self.prefillProgress)
        self._generation.busyChanged.connect(self.busyChanged)
        self._generation.notice.connect(self.notice)
        self._generation.ended.connect(self._on_reply_ended)
        worker.memoryChanged.connect(self.memoryChanged)
        self._draft_failed = False

    # ---- model ------------------------------------------------------------------------------
    @property
    def model_info(self) -> dict[str, Any] | None:
        return self._session.model_info

    @property
    def model_state(self) -> str:
        """One of "none", "loading", "ready" and "failed"."""
        return self._session.model_state

    @property
    def last_model_status(self) -> dict[str, Any]:
        return self._session.last_model_status

    def start(self) -> None:
        """Resolve and load the start-up model in the background (the window is already up);
        say what became of replies a previous run could not save."""
        if self.store.recovery_report:
            self.notice.emit(self.store.recovery_report)
        self._session.start()

    def load_model(self, path: str | Path) -> None:
        self._session.load_model(path)

    def set_cache_budget(self, budget_bytes: int) -> None:
        self._session.set_cache_budget(budget_bytes)

    # ---- conversations ----------------------------------------------------------------------
    def new_conversation(self) -> int:
        conversation = self.store.create_conversation(
            model_id=self._session.model_id, params=DEFAULT_PARAMS
        )
        self.conversationsChanged.emit()
        return conversation.id

    def open_conversation(self, conversation_id: int) -> None:
        self.store.get_conversation(conversation_id)
        self.preferences.last_conversation_id = conversation_id
        self.conversationOpened.emit(conversation_id)

    def draft(self, conversation_id: int) -> str:
        """The composer's unsent text for the conversation ("" when none, or unreadable)."""
        try:
            return self.store.draft(conversation_id)
        except StoreError:
            return ""

    def save_draft(self, conversation_id: int, text: str) -> bool:
        """Keep the composer's unsent text. False when the store refused it (try again later);
        that is told once until a save succeeds, since a draft is saved twice a second while
        typing. A conversation gone for good needs no draft (True)."""
        try:
            self.store.save_draft(conversation_id, text)
        except NotFoundError:
            return True
        except StoreError as exc:
            if not self._draft_failed:
                self._draft_failed = True
                self.notice.emit(f"The unsent message could not be saved: {exc}")
            return False
        self._draft_failed = False
        return True

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
        if self._generation.is_streaming_in(conversation_id):
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

    def import_conversation(self, data: object) -> Conversation:
        """A new conversation from exported JSON data. Raises StoreError (nothing is added
        then), so the caller can say which file was refused."""
        conversation = self.store.import_json(data)
        self.conversationsChanged.emit()
        return conversation

    def purge_deleted(self) -> int:
        """Make every deletion final (at close, when no undo is offered any more); returns how
        many conversations went. Raises StoreError: the deleted ones then stay until next time."""
        return self.store.purge_deleted()

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
        return self._generation.is_busy()

    def streaming_message_id(self) -> int | None:
        return self._generation.streaming_message_id()

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
        self.save_draft(conversation_id, "")  # sent: a restart must not offer it again
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

    def continue_reply(self, message_id: int) -> bool:
        """A new version of a stopped or cut-off reply that goes on where it ended; the reply as
        it was stays one click away."""
        if not self._can_generate():
            return False
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return False
        if message.role != "assistant" or message.parent_id is None or not message.content:
            self.notice.emit("Only a reply with some text can be continued.")
            return False
        return self._start_reply(message.conversation_id, message.parent_id, message.content)

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
        self.switch_to_message(siblings[target].id)

    def switch_to_message(self, message_id: int) -> bool:
        """Show the branch through the message (e.g. a search hit), at its last visited leaf."""
        leaf = self._guard(lambda: self.store.switch_to_sibling(message_id))
        if leaf is None:
            return False
        self.conversationChanged.emit(leaf.conversation_id)
        return True

    def delete_message(self, message_id: int) -> None:
        """Delete a message and every reply below it. A reply streaming inside that subtree is
        stopped first and its remaining tokens are dropped."""
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return
        try:
            self._generation.delete_subtree(message_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return
        self.conversationChanged.emit(message.conversation_id)

    def stop(self) -> None:
        """Stop the reply being written now; its text so far is kept, marked as stopped."""
        self._generation.stop()

    def request_token_count(self, conversation_id: int, draft: str) -> None:
        """Count the prompt the draft would make (on the worker); answers with `tokenCount`."""
        if self.model_state != "ready":
            return
        try:
            path = self.store.active_path(conversation_id)
            messages = prompt_messages(self.store, conversation_id, path)
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
        """Stop generation, save the partial reply and the draft, join the worker, close the
        store."""
        self.closing.emit()
        self._generation.stop()
        joined = self.worker.shutdown(timeout_s)
        self._generation.save_after_shutdown()
        self.store.close()
        return joined

    # ---- internals ----------------------------------------------------------------------------
    def _can_generate(self) -> bool:
        if self._generation.is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        if self.model_state != "ready":
            self.notice.emit("The model is not ready yet: wait for it to finish loading.")
            return False
        return True

    def _start_reply(self, conversation_id: int, parent_id: int, continued: str = "") -> bool:
        model_id = self._session.model_id
        started = self._guard(
            lambda: self._generation.start(conversation_id, parent_id, model_id, continued)
        )
        if started is None:
            return False
        self.conversationChanged.emit(conversation_id)
        return True

    @Slot(int)
    def _on_reply_ended(self, conversation_id: int) -> None:
        self.conversationChanged.emit(conversation_id)
        self.conversationsChanged.emit()

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        """Run a store action; a refusal becomes a notice for the person instead of a crash."""
        try:
            return action()
        except StoreError as exc:
            self.notice.emit(str(exc))
            return None


def _forget(engine: EngineLike | None, conversation_id: int) -> None:
    """Free a deleted conversation's caches (an undo only costs a recompute, never text)."""
    if engine is not None:
        engine.forget(conversation_id)
