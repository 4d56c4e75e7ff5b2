"""The chat controller: turns a person's intents into store changes and worker requests.

It lives on the GUI thread and is the one object the window talks to: every change to a conversation
goes through it, so its change signals and the worker's caches stay in step with the store. It is
composed of the model session (`app.generation.model_session`), the reply being generated
(`app.generation.reply_generation`), the composer's token counts (`app.chat.prompt_counts`, as
`counts`), a conversation's life (`app.chat.conversation_actions`), the person's actions on
messages (`app.chat.message_actions`, with compaction's, `compaction`), Compare's
(`app.chat.compare_actions`) and knowledge (`app.chat.knowledge`, as `knowledge`). These know no
controller: each is given what it works with and says what changed by its own signals, connected
to the controller's of the same names.

A conversation whose model id is `remote:<connection>/<model>` (see `app.remote.connections`) gets
its replies from that server through `app.remote.backend`, whatever model the worker holds.

Signals carry plain values and frozen dataclasses (declared with their payload's class, beside the
code that emits them). Connect them to methods of GUI-thread QObjects (never lambdas):
`tokenCount` may be emitted from the worker thread, and a lambda receiver would run there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from app.chat.branch_model import BranchModels, FollowSetup, ModelFollowed
from app.chat.compare_actions import CompareActions
from app.chat.conversation_actions import ConversationActions, new_chat_params
from app.chat.image_attach import ImageAttached, ScannedPdf
from app.chat.knowledge.chat_knowledge import ChatKnowledge
from app.chat.message_actions import BUSY_MESSAGE, MessageActions
from app.chat.prompt_counts import FileAttached, PromptCounts, TokenCount
from app.chat.tools.chat_tools import ChatTools
from app.generation.compare_generation import CompareGeneration
from app.generation.compare_plan import CompareModel, ComparePlan
from app.generation.model_session import ModelResolver, ModelSession, ModelState, ModelStatus
from app.generation.reply_events import ContextFull, ReplyPrefill, StreamUpdate
from app.generation.reply_generation import DEFAULT_PARAMS, ReplyBackend, ReplyGeneration
from app.generation.variant_generation import VariantGeneration
from app.generation.worker import InferenceWorker
from app.generation.worker_events import MemoryUse, ModelLoaded
from app.remote.backend import RemoteBackend
from app.remote.connections import Connections, is_remote
from app.replay.replays import Replays
from app.server.host import ServerHost
from app.settings import Preferences
from app.store.conversations import Conversation, Store, StoreError

__all__ = ["BUSY_MESSAGE", "DEFAULT_PARAMS", "ChatController", "ModelResolver", "new_chat_params"]


class ChatController(QObject):
    conversationsChanged = Signal()  # the sidebar list changed
    conversationChanged = Signal(int)  # this conversation's tree or active path changed
    streamUpdated = Signal(StreamUpdate)
    busyChanged = Signal(bool)
    notice = Signal(str)  # a message for the person: a refusal or an error
    modelStatus = Signal(ModelStatus)
    memoryChanged = Signal(MemoryUse)
    prefillProgress = Signal(ReplyPrefill)
    tokenCount = Signal(TokenCount)
    conversationOpened = Signal(int)  # the window shows this conversation now
    closing = Signal()  # the store closes next: save what is still only in memory (a draft)
    contextFull = Signal(ContextFull)  # the window offers `continue_in_new_chat`
    attachmentReady = Signal(FileAttached)  # a file was read
    imageReady = Signal(ImageAttached)  # an image was kept
    scannedPdf = Signal(ScannedPdf)  # offer its pages
    modelFollowed = Signal(ModelFollowed)  # the chat goes on with the shown branch's model

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        preferences: Preferences,
        model_resolver: ModelResolver | None = None,
        connections: Connections | None = None,
        models_dir: Path | None = None,
    ) -> None:
        """`models_dir` is the library, where new chats' default, draft and summary models are
        found (without it, new chats use the loaded model, which guesses ahead alone)."""
        super().__init__()
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
            detail_for=self.image_detail,
        )
        relayed = ("streamUpdated", "prefillProgress", "busyChanged", "notice", "contextFull")
        self._relay(self._generation, *relayed)
        self._generation.ended.connect(self._on_reply_ended)
        self.variants = VariantGeneration(
            store, worker, lambda: self.model_info, parent=self, detail_for=self.image_detail
        )
        self._relay(self.variants, "busyChanged", "notice")
        self.variants.ended.connect(self._on_reply_ended)
        self.compare = CompareGeneration(
            store,
            worker,
            self.remote,
            worker.next_request_id,
            lambda: preferences.overflow_policy,
            parent=self,
            detail_for=self.image_detail,
        )
        self._relay(self.compare, "busyChanged", "notice")
        follow = FollowSetup(
            models_dir,
            connections is not None,
            worker,
            lambda: preferences.cpu_float32,
            self.load_model,
            self.notice,
        )
        self._branches = BranchModels(store, follow, self.modelFollowed)
        self.replays = Replays(store, worker, lambda: self.model_info, parent=self)
        self.replays.kept.connect(self._on_reply_ended)
        worker.memoryChanged.connect(self.memoryChanged)
        worker.diskError.connect(self._on_disk_error)
        worker.draftModelFailed.connect(self.notice)
        self.knowledge = ChatKnowledge(store, worker, preferences, self.remote_model, parent=self)
        self._relay(self.knowledge.turns, "busyChanged", "notice", "conversationChanged")
        # The local server for other apps (Preferences › Server), on the same worker.
        self.server = ServerHost(worker, lambda: self.model_info, parent=self)
        self.server.set_knowledge(lambda: self.knowledge.base, self.knowledge.budget)
        self.counts = PromptCounts(
            store,
            worker,
            self._session,
            self.remote_model,
            self.image_detail,
            lambda: preferences.overflow_policy,
            parent=self,
            knowledge_setting=self.knowledge.budget_setting,
        )
        self._relay(
            self.counts, "notice", "tokenCount", "attachmentReady", "scannedPdf", "imageReady"
        )
        # Tool use (app.chat.tools.chat_tools): MCP servers, approvals, the loop answering calls.
        self.tools = ChatTools(
            store,
            preferences,
            lambda: self.model_info,
            lambda cid, parent_id: self._messages.continue_after_tools(cid, parent_id),
            store.path.parent,
            knowledge=self.knowledge.tools,
            parent=self,
        )
        self._conversations = ConversationActions(
            store, worker, preferences, self._session, self._generation, models_dir, parent=self
        )
        self._messages = MessageActions(
            store,
            worker,
            self.remote,
            preferences,
            self._session,
            self._generation,
            self.variants,
            models_dir,
            self._branches,
            is_busy=self.is_busy,
            remote_model=self.remote_model,
            save_draft=self._conversations.save_draft,
            tool_schemas=self.tools.schemas,
            end_tool_loop=self.tools.end_loop,
            image_detail=self.image_detail,
            request_ids=worker.next_request_id,
            answer_turn=self.knowledge.turns.answer,
            parent=self,
        )
        self.compaction = compaction = self._messages.compaction  # app.compaction: summaries
        self._relay(compaction, "busyChanged", "streamUpdated", "prefillProgress")
        self._compare = CompareActions(
            store,
            worker,
            self.compare,
            self._branches,
            is_busy=self.is_busy,
            save_draft=self._conversations.save_draft,
            end_tool_loop=self.tools.end_loop,
            answer_turn=self.knowledge.turns.answer,
            parent=self,
        )
        for part in (self._conversations, self._messages, self._compare, self.compaction):
            self._relay(part, "notice", "conversationsChanged", "conversationChanged")
        self._conversations.conversationOpened.connect(self.conversationOpened)
        self._reply_writers = (self._generation, self.variants, self.compare, self.compaction)
        self.tool_flow, self.tool_session = self.tools.flow, self.tools.session
        self._generation.toolCallsMade.connect(self.tool_flow.reply_finished)
        self.tool_flow.conversationChanged.connect(self.conversationChanged)

    # ---- model ------------------------------------------------------------------------------
    @property
    def model_info(self) -> ModelLoaded | None:
        return self._session.model_info

    @property
    def model_state(self) -> ModelState:
        return self._session.model_state

    @property
    def last_model_status(self) -> ModelStatus:
        return self._session.last_model_status

    def start(self) -> None:
        """Load the start-up model in the background and report replies left unsaved last run."""
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
        """Delete the loaded model's saved caches, on disk and in memory (idle time would save them
        again); `on_done(True)` once done, `on_done(False)` when no model names its files."""
        self._session.clear_saved_caches(on_done)

    def image_detail(self, model_id: str | None = None) -> int | None:
        """The image detail Preferences keeps for `model_id` (by default the loaded model);
        None for what its processor takes, and for a remote model, which sizes images itself."""
        model_id = model_id or self._session.model_id
        if not model_id or is_remote(model_id):
            return None
        return self.preferences.image_detail_for(model_id)

    def remote_model(self, conversation_id: int) -> str | None:
        """The conversation's remote model id, or None when it uses the local model."""
        try:
            model_id = self.store.get_conversation(conversation_id).model_id
        except StoreError:
            return None
        return model_id if is_remote(model_id) else None

    # ---- conversations (app.chat.conversation_actions) ------------------------------------
    def new_conversation(self) -> int:
        return self._conversations.new_conversation()

    def open_conversation(self, conversation_id: int) -> None:
        self._conversations.open_conversation(conversation_id)

    def draft(self, conversation_id: int) -> str:
        return self._conversations.draft(conversation_id)

    def save_draft(self, conversation_id: int, text: str) -> bool:
        return self._conversations.save_draft(conversation_id, text)

    def rename_conversation(self, conversation_id: int, title: str) -> None:
        self._conversations.rename_conversation(conversation_id, title)

    def set_pinned(self, conversation_id: int, pinned: bool) -> None:
        self._conversations.set_pinned(conversation_id, pinned)

    def delete_conversation(self, conversation_id: int) -> None:
        self._conversations.delete_conversation(conversation_id)

    def fork_conversation(self, message_id: int) -> int | None:
        return self._conversations.fork_conversation(message_id)

    def continue_in_new_chat(self, conversation_id: int) -> int | None:
        return self._conversations.continue_in_new_chat(conversation_id)

    def restore_conversation(self, conversation_id: int) -> None:
        self._conversations.restore_conversation(conversation_id)

    def import_conversation(self, data: object) -> Conversation:
        return self._conversations.import_conversation(data)

    def purge_deleted(self) -> int:
        return self._conversations.purge_deleted()

    def change_params(self, conversation_id: int, change: dict[str, Any]) -> None:
        self._conversations.change_params(conversation_id, change)

    def update_settings(
        self,
        conversation_id: int,
        *,
        system_prompt: str | None = None,
        params: dict[str, Any] | None = None,
        model_id: str | None = None,
    ) -> None:
        self._conversations.update_settings(
            conversation_id, system_prompt=system_prompt, params=params, model_id=model_id
        )

    # ---- messages (app.chat.message_actions) ------------------------------------------------
    def is_busy(self) -> bool:
        return any(part.is_busy() for part in (*self._reply_writers, self.knowledge.turns))

    def streaming_message_id(self) -> int | None:
        return self._generation.streaming_message_id() or self.compaction.streaming_message_id()

    def send(
        self, conversation_id: int, text: str, attachments: list[dict[str, Any]] | None = None
    ) -> bool:
        if not self.is_busy():
            # Continuing from a blind compare's shown answer picks it: its model is told first.
            self.compare.reveal()
        return self._messages.send(conversation_id, text, attachments)

    # ---- compare (app.chat.compare_actions) -------------------------------------------------
    def compare_plan(self, conversation_id: int, models: list[CompareModel]) -> ComparePlan:
        """How `models` would answer now: side by side or one after another, and why. Raises
        CompareRefused (saying why) when they cannot."""
        return self._compare.plan(conversation_id, models)

    def send_to_models(
        self,
        conversation_id: int,
        text: str,
        attachments: list[dict[str, Any]] | None,
        models: list[CompareModel],
        blind: bool = False,
    ) -> bool:
        """Send a new message to 2-4 models; each answer becomes a sibling reply."""
        return self._compare.send(conversation_id, text, attachments, models, blind)

    def compare_on(self, message_id: int, models: list[CompareModel], blind: bool = False) -> bool:
        """Ask 2-4 models about a message already sent (a reply: the message it answers)."""
        return self._compare.answer(message_id, models, blind)

    def regenerate(self, message_id: int) -> bool:
        return self._messages.regenerate(message_id)

    def regenerate_variants(self, message_id: int, n: int) -> bool:
        return self._messages.regenerate_variants(message_id, n)

    def continue_reply(self, message_id: int) -> bool:
        return self._messages.continue_reply(message_id)

    def edit(
        self, message_id: int, new_text: str, attachments: list[dict[str, Any]] | None = None
    ) -> bool:
        return self._messages.edit(message_id, new_text, attachments)

    def switch_sibling(self, message_id: int, delta: int) -> None:
        self._messages.switch_sibling(message_id, delta)

    def switch_to_message(self, message_id: int) -> bool:
        return self._messages.switch_to_message(message_id)

    def delete_message(self, message_id: int) -> None:
        self._messages.delete_message(message_id)

    def stop(self) -> None:
        """Stop the replies being written now; their text so far is kept, marked as stopped."""
        for part in (*self._reply_writers, self.knowledge.turns):
            part.stop()

    def shutdown(self, timeout_s: float = 2.0) -> bool:
        """Stop generation, save the partial replies and the draft, join the worker, close."""
        self.closing.emit()
        self.stop()
        joined = self.worker.shutdown(timeout_s)
        for part in self._reply_writers:
            part.save_after_shutdown()
        self.store.close()
        return joined

    # ---- internals ----------------------------------------------------------------------------
    def _relay(self, part: QObject, *names: str) -> None:  # signals to the same-named ones here
        for name in names:
            getattr(part, name).connect(getattr(self, name))

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
