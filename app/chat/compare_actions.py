"""Compare, for the chat controller: send a new message to 2-4 models, or ask them about a
message already sent, each answer a sibling reply labelled with its model
(`app.generation.compare_generation`), run as memory allows (`app.generation.compare_plan`).

When the run ends, or one answer is kept, the chat's model follows the branch shown
(`app.chat.branch_model`), so a follow-up goes to the model that wrote the answer it follows.
The person's message is stored before any model is asked, so a failed or stopped compare keeps
it, with every answer written so far.

`CompareActions` is given what it works with (the store, the worker, callables for whether a
reply is being written, saving a chat's draft and ending its tool loop) and knows no
controller: it says what changed through its own signals, which the controller relays as its
same-named ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.chat.message_actions import BUSY_MESSAGE, AnswerTurn
from app.chat.store_guard import guarded
from app.generation.compare_plan import (
    CompareModel,
    ComparePlan,
    CompareRefused,
    plan_compare,
)
from app.generation.worker_models import same_folder
from app.library.cpu_weights import running_weights_bytes
from app.remote.connections import parse_remote
from app.store.conversations import StoreError
from app.store.tree import holds_image

if TYPE_CHECKING:
    from app.chat.branch_model import BranchModels
    from app.generation.compare_generation import CompareGeneration
    from app.generation.worker import InferenceWorker
    from app.library.entries import ModelInfo
    from app.store.conversations import Store


def library_model(info: ModelInfo, cpu_float32: str) -> CompareModel:
    """A library model as a compare asks it: the memory its weights take once loaded under
    the CPU preference (float32 where it will run so)."""
    weights = running_weights_bytes(info.weights_bytes, info.parameters, cpu_float32)
    return CompareModel(info.path.name, info.name, info.path, weights)


def remote_model(model_id: str) -> CompareModel:
    remote = parse_remote(model_id)
    return CompareModel(model_id, f"{remote.model} on {remote.connection}")


class CompareActions(QObject):
    """`is_busy()` says whether any reply is being written; `save_draft(conversation_id, text)`
    keeps the composer's unsent text; `end_tool_loop(conversation_id)` drops what the tool loop
    still asks about as new replies start."""

    notice = Signal(str)
    conversationsChanged = Signal()
    conversationChanged = Signal(int)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        compare: CompareGeneration,
        branches: BranchModels,
        *,
        is_busy: Callable[[], bool],
        save_draft: Callable[[int, str], bool],
        end_tool_loop: Callable[[int], None],
        answer_turn: AnswerTurn = lambda _cid, _message_id, then: then(),
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._answer_turn = answer_turn
        self._store = store
        self._worker = worker
        self._is_busy = is_busy
        self._save_draft = save_draft
        self._end_tool_loop = end_tool_loop
        self._compare = compare
        self._branches = branches
        compare.ended.connect(self._on_ended)
        compare.revealed.connect(self._follow)

    def plan(
        self, conversation_id: int, models: Sequence[CompareModel], blind: bool = False
    ) -> ComparePlan:
        """How `models` would run now (what the chooser shows before anything is sent).
        `blind`: in an order of chance, the first shown, so neither a column's place nor the
        branch shown says which model it is. Raises CompareRefused, saying why, when they
        cannot."""
        worker = self._worker
        held = worker.held_models()
        # A model loaded already takes what it takes, not what its files suggest.
        measured = [
            next(
                (
                    replace(m, weights_bytes=h.weights_bytes)
                    for h in held
                    if m.path is not None and same_folder(m.path, h.path)
                ),
                m,
            )
            for m in models
        ]
        try:
            chat_model = self._store.get_conversation(conversation_id).model_id
        except StoreError:  # a chat gone meanwhile: the start says so
            chat_model = None
        if blind:
            measured, chat_model = random.sample(measured, len(measured)), None
        return plan_compare(measured, worker.model_room(), held, chat_model)

    def send(
        self,
        conversation_id: int,
        text: str,
        attachments: list[dict[str, Any]] | None,
        models: Sequence[CompareModel],
        blind: bool,
    ) -> bool:
        """Add the person's message under the active leaf, retrieve the knowledge the chat reads
        for it, and ask `models` to answer it."""
        if not text.strip() and not holds_image(attachments):
            self.notice.emit("Type a message first.")
            return False
        plan = self._checked_plan(conversation_id, models, blind)
        conversation = self._guard(lambda: self._store.get_conversation(conversation_id))
        if plan is None or conversation is None:
            return False
        user = self._guard(
            lambda: self._store.append_message(
                conversation_id, conversation.active_leaf_id, "user", text, attachments=attachments
            )
        )
        if user is None:
            return False
        self._save_draft(conversation_id, "")  # sent: a restart must not offer it again
        self.conversationsChanged.emit()
        return self._answer_turn(
            conversation_id, user.id, lambda: self._start(conversation_id, user.id, plan, blind)
        )

    def answer(self, message_id: int, models: Sequence[CompareModel], blind: bool) -> bool:
        """Ask `models` about a message already sent (a reply: the message it answers); their
        answers become siblings of the replies it has."""
        message = self._guard(lambda: self._store.get_message(message_id))
        if message is None:
            return False
        if message.role == "assistant" and (asked := message.parent_id) is not None:
            message = self._guard(lambda: self._store.get_message(asked))
            if message is None:
                return False
        if message.role != "user":
            self.notice.emit("Models are compared on a message of yours.")
            return False
        plan = self._checked_plan(message.conversation_id, models, blind)
        return plan is not None and self._start(message.conversation_id, message.id, plan, blind)

    def _checked_plan(
        self, conversation_id: int, models: Sequence[CompareModel], blind: bool
    ) -> ComparePlan | None:
        if self._is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return None
        try:
            return self.plan(conversation_id, models, blind)
        except CompareRefused as exc:
            self.notice.emit(str(exc))
            return None

    def _start(self, conversation_id: int, parent_id: int, plan: ComparePlan, blind: bool) -> bool:
        self._end_tool_loop(conversation_id)  # a call still asked about belongs to the past
        started = self._guard(lambda: self._compare.start(conversation_id, parent_id, plan, blind))
        self.conversationChanged.emit(conversation_id)
        return started is not None

    def _on_ended(self, conversation_id: int) -> None:
        # The run ended, or an answer was kept: the chat goes on with the shown branch's model,
        # once the names may be known (a blind run follows when they are revealed).
        if not self._compare.hidden_ids():
            self._follow(conversation_id)
        self.conversationChanged.emit(conversation_id)
        self.conversationsChanged.emit()

    def _follow(self, conversation_id: int) -> None:
        self._branches.follow(conversation_id, always=True)

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        return guarded(self.notice, action)
