"""A person's actions on the messages of a conversation, for the chat controller: send, edit,
regenerate (once, or several versions side by side), continue a reply, switch to a sibling
branch, delete a message's subtree. Each is refused with a notice saying why while a reply is
being written, while no model is ready, or when the message is not one it applies to; a message
with images is refused, saying why, while the local model cannot see images.

A conversation with a remote model gets its reply from that server; a local one from the worker,
with the chat's think settings and its draft model, when the library still has it.

`MessageActions` is given what it works with (the store, the worker, the remote backend, the
preferences, and callables for what the controller or its other parts know: whether a reply is
being written, a chat's remote model, saving its draft, the tools a reply is offered) and knows
no controller: it says what changed through its own signals, which the controller relays as its
same-named ones.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.chat.image_attach import model_sight
from app.chat.store_guard import guarded
from app.compaction.compactor import Compaction, CompactionSetup
from app.generation.model_session import ModelState
from app.generation.reply_events import BUSY_MESSAGE
from app.generation.think_settings import template_kwargs
from app.images.store import is_image_record
from app.library.draft_choice import chosen_draft, library_path
from app.store.conversations import StoreError
from app.store.tree import holds_image

if TYPE_CHECKING:
    from app.chat.branch_model import BranchModels
    from app.generation.model_session import ModelSession
    from app.generation.reply_generation import ReplyBackend, ReplyGeneration
    from app.generation.variant_generation import VariantGeneration
    from app.generation.worker import InferenceWorker
    from app.remote.backend import RemoteBackend
    from app.settings import Preferences
    from app.store.conversations import Store

# (conversation_id, user message id, start its reply): the knowledge retrieved for a new user
# message is kept on it before its reply starts (app.chat.knowledge.turns).
AnswerTurn = Callable[[int, int, Callable[[], bool]], bool]


class MessageActions(QObject):
    """`models_dir` is the library, where draft models are found (without it, replies guess
    ahead from the conversation only). `is_busy()` says whether any reply is being written;
    `remote_model(conversation_id)` is the chat's remote model id, or None for the local model;
    `save_draft(conversation_id, text)` keeps the composer's unsent text; `tool_schemas(
    conversation_id, remote)` are the tools a reply is offered, and `end_tool_loop(
    conversation_id)` drops what the tool loop still asks about as a new reply starts."""

    notice = Signal(str)
    conversationsChanged = Signal()
    conversationChanged = Signal(int)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        remote: RemoteBackend | None,
        preferences: Preferences,
        session: ModelSession,
        generation: ReplyGeneration,
        variants: VariantGeneration,
        models_dir: Path | None,
        branches: BranchModels,
        *,
        is_busy: Callable[[], bool],
        remote_model: Callable[[int], str | None],
        save_draft: Callable[[int, str], bool],
        tool_schemas: Callable[[int, bool], list[dict[str, Any]]],
        end_tool_loop: Callable[[int], None],
        image_detail: Callable[[str | None], int | None],
        request_ids: Callable[[], int],
        answer_turn: AnswerTurn = lambda _cid, _message_id, then: then(),
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._answer_turn = answer_turn
        setup = CompactionSetup(
            worker,
            remote,
            preferences,
            session,
            models_dir,
            is_busy,
            remote_model,
            image_detail,
            self.continue_after_tools,
            branches.load,
            generation.ended,
        )
        # *Summarise up to Here*, `/compact`, and summaries before a reply (app.compaction).
        self.compaction = Compaction(store, setup, request_ids, self)
        self._store = store
        self._worker = worker
        self._remote = remote
        self._preferences = preferences
        self._branches = branches
        self._is_busy = is_busy
        self._remote_model = remote_model
        self._save_draft = save_draft
        self._tool_schemas = tool_schemas
        self._end_tool_loop = end_tool_loop
        self._session = session
        self._generation = generation
        self._variants = variants
        self._models_dir = models_dir
        # Draft models chats name that the library no longer has: told once each.
        self._missing_drafts: set[str] = set()

    def send(
        self, conversation_id: int, text: str, attachments: list[dict[str, Any]] | None = None
    ) -> bool:
        """Add the person's message (with the files attached to it, as `attachmentReady` gave
        them) under the active leaf, retrieve the knowledge the chat reads for it, and generate
        a reply to it (`/compact`: summarise)."""
        if (compacting := self.compaction.command(conversation_id, text)) is not None:
            return compacting
        if not text.strip() and not holds_image(attachments):
            self.notice.emit("Type a message first.")
            return False
        conversation = self._guard(lambda: self._store.get_conversation(conversation_id))
        if conversation is None or not self._can_generate(conversation_id):
            return False
        if self._unseen_images(conversation_id, attachments or []):
            return False
        user = self._guard(
            lambda: self._store.append_message(
                conversation_id,
                conversation.active_leaf_id,
                "user",
                text,
                attachments=attachments,
            )
        )
        if user is None:
            return False
        self._save_draft(conversation_id, "")  # sent: a restart must not offer it again
        self.conversationsChanged.emit()
        return self._answer_turn(
            conversation_id, user.id, lambda: self._reply_to_new(conversation_id, user.id)
        )

    def _reply_to_new(self, conversation_id: int, message_id: int) -> bool:
        """The reply to the person's new message, its knowledge kept on it: on a compacted
        branch when older turns are summarised first (the copy keeps its excerpts)."""
        if self.compaction.takes_turn(conversation_id, message_id):
            return True  # answered on the compacted branch once it is made
        return self._start_reply(conversation_id, message_id)

    def regenerate(self, message_id: int) -> bool:
        """A new sibling reply to the same message; the old reply stays one click away."""
        message = self._guard(lambda: self._store.get_message(message_id))
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
        message = self._guard(lambda: self._store.get_message(message_id))
        if message is None:
            return False
        if self._remote_model(message.conversation_id):
            self.notice.emit("Several versions at once are made by a local model only.")
            return False
        if not self._can_generate(message.conversation_id):
            return False
        if message.role != "assistant" or message.parent_id is None:
            self.notice.emit("Only a reply can be regenerated.")
            return False
        cid, parent, model = message.conversation_id, message.parent_id, self._session.model_id
        if self._guard(lambda: self._variants.start(cid, parent, model, n)) is None:
            return False
        self.conversationChanged.emit(cid)
        return True

    def continue_reply(self, message_id: int) -> bool:
        """A new version of a stopped or cut-off reply that goes on where it ended; the reply as
        it was stays one click away."""
        message = self._guard(lambda: self._store.get_message(message_id))
        if message is None:
            return False
        if not self._can_generate(message.conversation_id):
            return False
        if message.role != "assistant" or message.parent_id is None or not message.content:
            self.notice.emit("Only a reply with some text can be continued.")
            return False
        return self._start_reply(message.conversation_id, message.parent_id, message.content)

    def edit(
        self, message_id: int, new_text: str, attachments: list[dict[str, Any]] | None = None
    ) -> bool:
        """A new sibling of a user message with the new text (and its files and images, or
        `attachments` in their place; never its knowledge excerpts), its own retrieval, and a
        reply to it."""
        original = self._guard(lambda: self._store.get_message(message_id))
        if original is None:
            return False
        kept = list(original.attachments) if attachments is None else attachments
        if not new_text.strip() and not holds_image(kept):
            self.notice.emit("An edited message cannot be empty.")
            return False
        if original.role == "summary":
            return self.compaction.edit(message_id, new_text)
        if original.role != "user":
            self.notice.emit("Only your own messages can be edited.")
            return False
        if not self._can_generate(original.conversation_id):
            return False
        if self._unseen_images(original.conversation_id, kept):
            return False
        edited = self._guard(lambda: self._store.edit_message(message_id, new_text, attachments))
        if edited is None:
            return False
        cid = edited.conversation_id
        return self._answer_turn(cid, edited.id, lambda: self._start_reply(cid, edited.id))

    def switch_sibling(self, message_id: int, delta: int) -> None:
        """Show the previous (-1) or next (+1) sibling branch, at its last visited leaf."""
        found = self._guard(lambda: self._store.siblings(message_id))
        if found is None:
            return
        siblings, index = found
        target = min(max(index + delta, 0), len(siblings) - 1)
        if target == index:
            return
        self.switch_to_message(siblings[target].id)

    def switch_to_message(self, message_id: int) -> bool:
        """Show the branch through the message (e.g. a search hit), at its last visited leaf;
        when another model wrote it than the branch left, the chat goes on with that model."""
        message = self._guard(lambda: self._store.get_message(message_id))
        if message is None:
            return False
        left = self._branches.shown_model(message.conversation_id)
        leaf = self._guard(lambda: self._store.switch_to_sibling(message_id))
        if leaf is None:
            return False
        self._branches.follow(leaf.conversation_id, left)
        self.conversationChanged.emit(leaf.conversation_id)
        return True

    def delete_message(self, message_id: int) -> None:
        """Delete a message and every reply below it. A reply streaming inside that subtree is
        stopped first and its remaining tokens are dropped."""
        message = self._guard(lambda: self._store.get_message(message_id))
        if message is None:
            return
        try:
            self._generation.delete_subtree(message_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return
        self.conversationChanged.emit(message.conversation_id)

    def _can_generate(self, conversation_id: int) -> bool:
        if self._is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        if self._remote_model(conversation_id):
            if self._remote is None:
                self.notice.emit(
                    "This conversation uses a remote model, and no connections are set up."
                )
                return False
            return True
        if self._session.model_state != ModelState.READY:
            self.notice.emit("The model is not ready yet: wait for it to finish loading.")
            return False
        return True

    def _unseen_images(self, conversation_id: int, attachments: list[dict[str, Any]]) -> bool:
        """Whether a message with these attachments is refused (with the notice saying why):
        it has images and the local model cannot see them. A remote server answers for
        itself."""
        if not any(is_image_record(item) for item in attachments):
            return False
        sight = model_sight(self._session.model_info)
        if sight.sees or self._remote_model(conversation_id):
            return False
        self.notice.emit(sight.refusal)
        return True

    def _start_reply(self, conversation_id: int, parent_id: int, continued: str = "") -> bool:
        remote = self._remote_model(conversation_id)
        model_id = remote or self._session.model_id
        backend: ReplyBackend = self._remote if remote and self._remote else self._worker
        conversation = self._guard(lambda: self._store.get_conversation(conversation_id))
        if conversation is None:
            return False
        kwargs = {} if remote else template_kwargs(self._session.model_info, conversation.params)
        draft = None if remote else self._draft_model(conversation.params, model_id)
        tools = self._tool_schemas(conversation_id, bool(remote))
        self._end_tool_loop(conversation_id)  # a call still asked about belongs to the past
        started = self._guard(
            lambda: self._generation.start(
                conversation_id, parent_id, model_id, backend, kwargs, continued, draft, tools
            )
        )
        if started is None:
            return False
        self.conversationChanged.emit(conversation_id)
        return True

    def continue_after_tools(self, conversation_id: int, parent_id: int) -> bool:
        """The model goes on below the results of its tool calls (or answers `parent_id`, a
        message of a compacted branch or of the full chat)."""
        return self._can_generate(conversation_id) and self._start_reply(conversation_id, parent_id)

    def _draft_model(self, params: dict[str, Any], model_id: str | None) -> Path | None:
        """The folder of the draft model a reply on `model_id` guesses ahead with, if any; a
        chosen one gone from the library is said once, and the reply guesses from the
        conversation instead."""
        name = chosen_draft(params, model_id, self._preferences)
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

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        return guarded(self.notice, action)
