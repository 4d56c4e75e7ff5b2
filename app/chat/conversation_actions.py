"""A conversation's life, for the chat controller: create one with the defaults from
Preferences, open, rename, pin, delete and undo it, purge deletions for good, fork a branch or
continue a full chat in a new one, import one, change its settings, and keep its unsent draft.

`ConversationActions` is given what it works with (the store, the worker, the preferences) and
knows no controller: it says what changed through its own signals, which the controller relays
as its same-named ones.

A deleted conversation's caches leave the worker's memory at once; its saved caches go only when
the deletion is purged, so an undo costs a recompute at most, never text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.chat.knowledge.choice import with_collections
from app.chat.store_guard import guarded
from app.generation.reply_generation import DEFAULT_PARAMS
from app.store.conversations import NotFoundError, StoreError

if TYPE_CHECKING:
    from app.generation.model_session import ModelSession
    from app.generation.reply_generation import ReplyGeneration
    from app.generation.worker import EngineLike, InferenceWorker
    from app.settings import Preferences
    from app.store.conversations import Conversation, Store


class ConversationActions(QObject):
    """`models_dir` is the library, where a new chat's default model must still be found
    (without it, new chats use the loaded model)."""

    notice = Signal(str)
    conversationsChanged = Signal()
    conversationChanged = Signal(int)
    conversationOpened = Signal(int)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        preferences: Preferences,
        session: ModelSession,
        generation: ReplyGeneration,
        models_dir: Path | None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._worker = worker
        self._preferences = preferences
        self._session = session
        self._generation = generation
        self._models_dir = models_dir
        self._draft_failed = False

    def new_conversation(self) -> int:
        """A new chat with the defaults from Preferences: their model when the library still
        has it (else the loaded one), their system prompt, sampling and knowledge."""
        preferences = self._preferences
        params = new_chat_params(preferences.default_params)
        conversation = self._store.create_conversation(
            model_id=self._default_model_id(),
            system_prompt=preferences.default_system_prompt,
            params=with_collections(params, preferences.default_knowledge),
        )
        self.conversationsChanged.emit()
        return conversation.id

    def _default_model_id(self) -> str | None:
        """Preferences name the default by its library entry; a chat by its model's id."""
        chosen = self._preferences.default_model_id
        if chosen is not None and self._models_dir is not None:
            from app.library.entries import list_models  # file work; imported when first needed

            for info in list_models(self._models_dir):
                if info.id == chosen and info.problem is None:
                    return info.path.name  # a chat names its model as the loaded model's id
        return self._session.model_id

    def open_conversation(self, conversation_id: int) -> None:
        self._store.get_conversation(conversation_id)
        self._preferences.last_conversation_id = conversation_id
        self.conversationOpened.emit(conversation_id)

    def draft(self, conversation_id: int) -> str:
        """The composer's unsent text for the conversation ("" when none, or unreadable)."""
        try:
            return self._store.draft(conversation_id)
        except StoreError:
            return ""

    def save_draft(self, conversation_id: int, text: str) -> bool:
        """Keep the composer's unsent text. False when the store refused it (try again later);
        that is told once until a save succeeds, since a draft is saved twice a second while
        typing. A conversation gone for good needs no draft (True)."""
        try:
            self._store.save_draft(conversation_id, text)
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
        self._guard(lambda: self._store.rename(conversation_id, title.strip()))
        self.conversationsChanged.emit()

    def set_pinned(self, conversation_id: int, pinned: bool) -> None:
        self._guard(lambda: self._store.set_pinned(conversation_id, pinned))
        self.conversationsChanged.emit()

    def delete_conversation(self, conversation_id: int) -> None:
        """Deleted softly: `restore_conversation` undoes it until the app closes."""
        if self._generation.is_streaming_in(conversation_id):
            self._generation.stop()
        self._guard(lambda: self._store.delete_conversation(conversation_id))
        # Memory only: an undo must find the saved caches still there (purging deletes them).
        self._worker.call_each(partial(_forget, conversation_id, keep_saved=True))
        self.conversationsChanged.emit()

    def fork_conversation(self, message_id: int) -> int | None:
        """A new conversation holding the path from the root to `message_id`, with the same
        settings; the original is untouched. Returns its id."""
        forked = self._guard(lambda: self._store.fork_conversation(message_id))
        if forked is None:
            return None
        self.conversationsChanged.emit()
        return forked.id

    def continue_in_new_chat(self, conversation_id: int) -> int | None:
        """A new conversation with the same model and settings whose draft is the last message
        the person wrote here (the one the full context could not answer). Returns its id."""
        source = self._guard(lambda: self._store.get_conversation(conversation_id))
        path = self._guard(lambda: self._store.active_path(conversation_id))
        if source is None or path is None:
            return None
        new = self._guard(
            lambda: self._store.create_conversation(
                title=f"{source.title} (continued)",
                system_prompt=source.system_prompt,
                model_id=source.model_id,
                params=source.params,
            )
        )
        if new is None:
            return None
        last = next((m.content for m in reversed(path) if m.role == "user"), "")
        self.save_draft(new.id, last)
        self.conversationsChanged.emit()
        return new.id

    def restore_conversation(self, conversation_id: int) -> None:
        self._guard(lambda: self._store.restore_conversation(conversation_id))
        self.conversationsChanged.emit()

    def import_conversation(self, data: object) -> Conversation:
        """A new conversation from exported JSON data. Raises StoreError (nothing is added
        then), so the caller can say which file was refused."""
        conversation = self._store.import_json(data)
        self.conversationsChanged.emit()
        return conversation

    def purge_deleted(self) -> int:
        """Make every deletion final (at close, when no undo is offered any more); returns how
        many conversations went. Raises StoreError: the deleted ones then stay until next time.
        Their saved caches go too (what other conversations share stays)."""
        doomed = self._store.deleted_conversation_ids()
        purged = self._store.purge_deleted()
        for conversation_id in doomed:
            self._worker.call_each(partial(_forget, conversation_id, keep_saved=False))
        return purged

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
        self._guard(lambda: self._store.update_settings(conversation_id, **changes))
        self.conversationChanged.emit(conversation_id)

    def change_params(self, conversation_id: int, change: dict[str, Any]) -> None:
        """Set some of a chat's parameters (Think, its tools…), keeping the others."""

        def merged() -> dict[str, Any]:
            return {**self._store.get_conversation(conversation_id).params, **change}

        params = self._guard(merged)
        if params is not None:
            self.update_settings(conversation_id, params=params)

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        return guarded(self.notice, action)


def new_chat_params(defaults: dict[str, Any]) -> dict[str, Any]:
    """A new chat's params: Branchwise's defaults with the chosen ones over them. Keys
    Branchwise does not know, and values of the wrong kind (a hand-edited settings file), are
    left out, as Preferences treats any unreadable value: as no choice."""
    return {
        **DEFAULT_PARAMS,
        **{k: v for k, v in defaults.items() if k in DEFAULT_PARAMS and _same_kind(k, v)},
    }


def _same_kind(key: str, value: Any) -> bool:
    default = DEFAULT_PARAMS[key]
    if isinstance(value, bool):
        return False
    if default is None:  # the seed: none, or a whole number
        return value is None or isinstance(value, int)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, int):
        return isinstance(value, int)
    return isinstance(value, int | float)


def _forget(conversation_id: int, engine: EngineLike, *, keep_saved: bool) -> None:
    """Free a deleted conversation's caches in one model held (an undo only costs a recompute,
    never text)."""
    engine.forget(conversation_id, keep_saved=keep_saved)
