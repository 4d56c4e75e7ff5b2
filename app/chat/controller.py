"""The chat controller: turns a person's intents into store changes and worker requests.

It lives on the GUI thread and is the one object the window talks to: every change to a conversation
goes through it, so its change signals and the worker's caches stay in step with the store. It is
composed of the model session (`app.generation.model_session`: which model is loaded, and its
status), the reply being generated (`app.generation.reply_generation`: streaming a reply into its
message) and the composer's token counts (`app.chat.prompt_counts`, as `counts`); this module
holds the conversations and the person's message actions.

A conversation whose model id is `remote:<connection>/<model>` (see `app.remote.connections`) gets
its replies from that server through `app.remote.backend`, whatever model the worker holds.

Signals carry plain values. Connect them to methods of GUI-thread QObjects (never lambdas):
`tokenCount` may be emitted from the worker thread, and a lambda receiver would run there.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from app.chat.chat_tools import ChatTools
from app.chat.prompt_counts import PromptCounts
from app.generation.model_session import ModelResolver, ModelSession
from app.generation.reply_generation import DEFAULT_PARAMS, ReplyBackend, ReplyGeneration
from app.generation.think_settings import template_kwargs
from app.generation.variant_generation import VariantGeneration
from app.generation.worker import EngineLike, InferenceWorker
from app.library.draft_choice import chosen_draft, library_path
from app.remote.backend import RemoteBackend
from app.remote.connections import Connections, is_remote
from app.server.host import ServerHost
from app.settings import OVERFLOW_POLICIES, Preferences
from app.store.conversations import Conversation, NotFoundError, Store, StoreError

__all__ = ["BUSY_MESSAGE", "DEFAULT_PARAMS", "ChatController", "ModelResolver"]

BUSY_MESSAGE = "A reply is still being written. Stop it (Esc) or wait for it to finish."


class ChatController(QObject):
    conversationsChanged = Signal()  # the sidebar list changed
    conversationChanged = Signal(int)  # this conversation's tree or active path changed
    # {"conversation_id", "message_id", "text", "reasoning", "thinking"} (whole texts)
    streamUpdated = Signal(object)
    busyChanged = Signal(bool)
    notice = Signal(str)  # a message for the person: a refusal or an error
    # {"state": "loading"|"ready"|"failed", "model_id", "message", "done", "total",
    #  "context_length"}
    modelStatus = Signal(object)
    memoryChanged = Signal(object)  # {"cache_bytes", "disk_bytes", "weights_bytes"}
    prefillProgress = Signal(object)  # {"message_id", "done", "total"}
    # {"conversation_id", "count", "context_length", "overflow": the chat's policy}
    tokenCount = Signal(object)
    conversationOpened = Signal(int)  # the window shows this conversation now
    closing = Signal()  # the store closes next: save what is still only in memory (a draft)
    # {"conversation_id", "message"}: the chat no longer fits the model's context (its overflow
    # policy is "stop"); the window offers `continue_in_new_chat`.
    contextFull = Signal(object)
    # {"conversation_id", "attachment": {"name", "size", "tokens", "text"}}: a file was read
    attachmentReady = Signal(object)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        preferences: Preferences,
        model_resolver: ModelResolver | None = None,
        connections: Connections | None = None,
        models_dir: Path | None = None,
    ) -> None:
        """`models_dir` is the library, where a new chat's default model must still be found
        and draft models are found (without it, new chats use the loaded model and replies
        guess ahead from the conversation only)."""
        super().__init__()
        self._models_dir = models_dir
        self.store = store
        self.worker = worker
        self.preferences = preferences
        # Without saved connections (tests of local chats), a remote model id is refused.
        self.connections = connections
        self.remote = RemoteBackend(connections, parent=self) if connections else None
        self._session = ModelSession(worker, preferences, model_resolver, parent=self)
        self._session.modelStatus.connect(self.modelStatus)
        self._session.notice.connect(self.notice)
        backends: list[ReplyBackend] = [worker, *([self.remote] if self.remote else [])]
        # One id sequence for every request the worker sees (the window's, the server's).
        self._generation = ReplyGeneration(
            store,
            backends,
            lambda: preferences.overflow_policy,
            worker.next_request_id,
            parent=self,
        )
        self._generation.streamUpdated.connect(self.streamUpdated)
        self._generation.prefillProgress.connect(self.prefillProgress)
        self._generation.busyChanged.connect(self.busyChanged)
        self._generation.notice.connect(self.notice)
        self._generation.contextFull.connect(self.contextFull)
        self._generation.ended.connect(self._on_reply_ended)
        self.variants = VariantGeneration(store, worker, parent=self)
        self.variants.busyChanged.connect(self.busyChanged)
        self.variants.notice.connect(self.notice)
        self.variants.ended.connect(self._on_reply_ended)
        worker.memoryChanged.connect(self.memoryChanged)
        worker.diskError.connect(self._on_disk_error)
        worker.draftModelFailed.connect(self.notice)
        self._draft_failed = False
        # Draft models chats name that the library no longer has: told once each.
        self._missing_drafts: set[str] = set()
        # The local server for other apps (Preferences › Server), on the same worker.
        self.server = ServerHost(worker, lambda: self.model_info, parent=self)
        self.counts = PromptCounts(self)
        # Tool use (app.chat.chat_tools): MCP servers, approvals, the loop answering calls.
        self.tools = ChatTools(store, preferences, lambda: self.model_info,
                               self._continue_after_tools, store.path.parent, parent=self)
        self.tool_flow, self.tool_session = self.tools.flow, self.tools.session
        self._generation.toolCallsMade.connect(self.tool_flow.reply_finished)
        self.tool_flow.conversationChanged.connect(self.conversationChanged)

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
        self.tool_session.start()

    def load_model(self, path: str | Path) -> None:
        self._session.load_model(path)

    def set_cache_budget(self, budget_bytes: int) -> None:
        self._session.set_cache_budget(budget_bytes)

    def set_disk_budget(self, budget_bytes: int) -> None:
        """Room for saved caches; the least recently used go first when it is exceeded."""
        self._session.set_disk_budget(budget_bytes)

    def clear_saved_caches(self, on_done: Callable[[bool], None] | None = None) -> None:
        """Delete the loaded model's saved cache files, and its caches in memory, which idle time
        would otherwise save again at once; `on_done(True)` once done, `on_done(False)` when no
        model is loaded to say which files are its own."""
        self.worker.call(_clear_saved, on_done=on_done, on_error=self.notice.emit)

    def overflow_policy(self, conversation_id: int) -> str:
        """The conversation's own overflow policy, else the default from Preferences."""
        params = self.store.get_conversation(conversation_id).params
        policy = params.get("overflow")
        return policy if policy in OVERFLOW_POLICIES else self.preferences.overflow_policy

    def remote_model(self, conversation_id: int) -> str | None:
        """The conversation's remote model id, or None when it uses the local model."""
        try:
            model_id = self.store.get_conversation(conversation_id).model_id
        except StoreError:
            return None
        return model_id if is_remote(model_id) else None

    # ---- conversations ----------------------------------------------------------------------
    def new_conversation(self) -> int:
        """A new chat with the defaults from Preferences: their model when the library still
        has it (else the loaded one), their system prompt and sampling."""
        preferences = self.preferences
        conversation = self.store.create_conversation(
            model_id=self._default_model_id(),
            system_prompt=preferences.default_system_prompt,
            params=new_chat_params(preferences.default_params),
        )
        self.conversationsChanged.emit()
        return conversation.id

    def _default_model_id(self) -> str | None:
        """Preferences name the default by its library entry; a chat by its model's id."""
        chosen = self.preferences.default_model_id
        if chosen is not None and self._models_dir is not None:
            from app.library.entries import list_models  # file work; imported when first needed

            for info in list_models(self._models_dir):
                if info.id == chosen and info.problem is None:
                    return info.path.name  # a chat names its model as the loaded model's id
        return self._session.model_id

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
        # Memory only: an undo must find the saved caches still there (purging deletes them).
        self.worker.call(partial(_forget, conversation_id, keep_saved=True))
        self.conversationsChanged.emit()

    def fork_conversation(self, message_id: int) -> int | None:
        """A new conversation holding the path from the root to `message_id`, with the same
        settings; the original is untouched. Returns its id."""
        forked = self._guard(lambda: self.store.fork_conversation(message_id))
        if forked is None:
            return None
        self.conversationsChanged.emit()
        return forked.id

    def continue_in_new_chat(self, conversation_id: int) -> int | None:
        """A new conversation with the same model and settings whose draft is the last message
        the person wrote here (the one the full context could not answer). Returns its id."""
        source = self._guard(lambda: self.store.get_conversation(conversation_id))
        path = self._guard(lambda: self.store.active_path(conversation_id))
        if source is None or path is None:
            return None
        new = self._guard(
            lambda: self.store.create_conversation(
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
        many conversations went. Raises StoreError: the deleted ones then stay until next time.
        Their saved caches go too (what other conversations share stays)."""
        doomed = self.store.deleted_conversation_ids()
        purged = self.store.purge_deleted()
        for conversation_id in doomed:
            self.worker.call(partial(_forget, conversation_id, keep_saved=False))
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
        self._guard(lambda: self.store.update_settings(conversation_id, **changes))
        self.conversationChanged.emit(conversation_id)

    # ---- messages ---------------------------------------------------------------------------
    def is_busy(self) -> bool:
        return self._generation.is_busy() or self.variants.is_busy()

    def streaming_message_id(self) -> int | None:
        return self._generation.streaming_message_id()

    def send(
        self, conversation_id: int, text: str, attachments: list[dict[str, Any]] | None = None
    ) -> bool:
        """Add the person's message (with the files attached to it, as `attachmentReady` gave
        them) under the active leaf and generate a reply to it."""
        if not text.strip():
            self.notice.emit("Type a message first.")
            return False
        conversation = self._guard(lambda: self.store.get_conversation(conversation_id))
        if conversation is None or not self._can_generate(conversation_id):
            return False
        user = self._guard(
            lambda: self.store.append_message(
                conversation_id,
                conversation.active_leaf_id,
                "user",
                text,
                attachments=attachments,
            )
        )
        if user is None:
            return False
        self.save_draft(conversation_id, "")  # sent: a restart must not offer it again
        self.conversationsChanged.emit()
        return self._start_reply(conversation_id, user.id)

    def regenerate(self, message_id: int) -> bool:
        """A new sibling reply to the same message; the old reply stays one click away."""
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return False
        if message.role != "assistant" or message.parent_id is None:
            self.notice.emit("Only a reply can be regenerated.")
            return False
        if not self._can_generate(message.conversation_id):
            return False
        return self._start_reply(message.conversation_id, message.parent_id)

    def regenerate_variants(self, message_id: int, n: int) -> bool:
        """`n` new sibling replies to the message `message_id` answers, decoded side by side."""
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return False
        if self.remote_model(message.conversation_id):
            self.notice.emit("Several versions at once are made by a local model only.")
            return False
        if not self._can_generate(message.conversation_id):
            return False
        if message.role != "assistant" or message.parent_id is None:
            self.notice.emit("Only a reply can be regenerated.")
            return False
        cid, parent, model = message.conversation_id, message.parent_id, self._session.model_id
        if self._guard(lambda: self.variants.start(cid, parent, model, n)) is None:
            return False
        self.conversationChanged.emit(cid)
        return True

    def continue_reply(self, message_id: int) -> bool:
        """A new version of a stopped or cut-off reply that goes on where it ended; the reply as
        it was stays one click away."""
        message = self._guard(lambda: self.store.get_message(message_id))
        if message is None:
            return False
        if not self._can_generate(message.conversation_id):
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
        original = self._guard(lambda: self.store.get_message(message_id))
        if original is None:
            return False
        if original.role != "user":
            self.notice.emit("Only your own messages can be edited.")
            return False
        if not self._can_generate(original.conversation_id):
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

    def shutdown(self, timeout_s: float = 2.0) -> bool:
        """Stop generation, save the partial reply and the draft, join the worker, close the
        store."""
        self.closing.emit()
        self._generation.stop()
        self.variants.stop()
        joined = self.worker.shutdown(timeout_s)
        self._generation.save_after_shutdown()
        self.variants.save_after_shutdown()
        self.store.close()
        return joined

    # ---- internals ----------------------------------------------------------------------------
    def _can_generate(self, conversation_id: int) -> bool:
        if self.is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        if self.remote_model(conversation_id):
            if self.remote is None:
                self.notice.emit(
                    "This conversation uses a remote model, and no connections are set up."
                )
                return False
            return True
        if self.model_state != "ready":
            self.notice.emit("The model is not ready yet: wait for it to finish loading.")
            return False
        return True

    def _start_reply(self, conversation_id: int, parent_id: int, continued: str = "") -> bool:
        remote = self.remote_model(conversation_id)
        model_id = remote or self._session.model_id
        backend: ReplyBackend = self.remote if remote and self.remote else self.worker
        conversation = self._guard(lambda: self.store.get_conversation(conversation_id))
        if conversation is None:
            return False
        kwargs = {} if remote else template_kwargs(self.model_info, conversation.params)
        draft = None if remote else self._draft_model(conversation.params, model_id)
        tools = self.tools.schemas(conversation_id, remote=bool(remote))
        started = self._guard(
            lambda: self._generation.start(
                conversation_id, parent_id, model_id, backend, kwargs, continued, draft, tools
            )
        )
        if started is None:
            return False
        self.conversationChanged.emit(conversation_id)
        return True

    def _continue_after_tools(self, conversation_id: int, parent_id: int) -> bool:
        """The model goes on below the results of its calls."""
        return self._can_generate(conversation_id) and self._start_reply(conversation_id, parent_id)

    def _draft_model(self, params: dict[str, Any], model_id: str | None) -> Path | None:
        """The folder of the draft model a reply on `model_id` guesses ahead with, if any; a
        chosen one gone from the library is said once, and the reply guesses from the
        conversation instead."""
        name = chosen_draft(params, model_id, self.preferences)
        if name is None or self._models_dir is None:
            return None
        path = library_path(self._models_dir, name)
        if path is None and name not in self._missing_drafts:
            self._missing_drafts.add(name)
            self.notice.emit(
                f"The draft model “{name}” is no longer in the library, so replies guess ahead "
                "from the conversation instead. Choose another in the chat's settings."
            )
        return path

    @Slot(str)
    def _on_disk_error(self, message: str) -> None:
        self.notice.emit(
            f"{message}. Caches stay in memory and chats work as before; they will not be kept "
            "after a restart until there is room (Preferences has the disk budget)."
        )

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


def _forget(conversation_id: int, engine: EngineLike | None, *, keep_saved: bool) -> None:
    """Free a deleted conversation's caches (an undo only costs a recompute, never text)."""
    if engine is not None:
        engine.forget(conversation_id, keep_saved=keep_saved)


def _clear_saved(engine: EngineLike | None) -> bool:
    if engine is None:
        return False
    engine.clear_cache()
    engine.clear_saved_caches()
    return True
