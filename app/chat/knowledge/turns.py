"""The retrieval for a new user message (a send, or an edit's new version), run once, before its
reply starts.

The person's message is stored first, so nothing they wrote waits on the index. The retrieval
then runs on the inference worker (queued between generations; the query's embedding may run
there, and the budget is counted with the loaded model's tokenizer), its excerpts are kept on
that message, and only then does the reply start, reading them from the store like any later
turn will. A crash in between leaves the message without excerpts, never lost. Stop while it
searches keeps the message and starts no reply. A retrieval that fails is said, and the reply is
written without knowledge. Nothing here ever touches a message that has been answered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.chat.knowledge.choice import chat_collections
from app.generation.knowledge_retrieval import (
    KnowledgeBase,
    TurnQuery,
    previous_user_text,
    retrieve_turn,
)
from app.store.conversations import NotFoundError, StoreError

if TYPE_CHECKING:
    from app.generation.worker import EngineLike, InferenceWorker
    from app.knowledge.excerpts import Retrieval
    from app.store.conversations import Store

STOPPED = "Stopped while searching the knowledge: your message is kept, and no reply was written."


@dataclass(frozen=True, slots=True)
class KnowledgeSearch:
    """The knowledge is being searched for the person's message `message_id` (`running`), or
    that search has ended."""

    conversation_id: int
    message_id: int
    running: bool


@dataclass
class _Search:
    token: int
    conversation_id: int
    message_id: int
    then: Callable[[], bool]


class KnowledgeTurns(QObject):
    """`knowledge()` is the index (None: there is none, and chats read nothing);
    `budget_setting()` the tokens a turn's excerpts may take (0: a quarter of the context);
    `remote_model(conversation_id)` the chat's remote model id, None for the local model."""

    notice = Signal(str)
    busyChanged = Signal(bool)
    searching = Signal(KnowledgeSearch)
    conversationChanged = Signal(int)  # its new message shows while the search runs

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        knowledge: Callable[[], KnowledgeBase | None],
        budget_setting: Callable[[], int],
        remote_model: Callable[[int], str | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._worker = worker
        self._knowledge = knowledge
        self._budget_setting = budget_setting
        self._remote_model = remote_model
        self._search: _Search | None = None
        self._tokens = 0

    def is_busy(self) -> bool:
        return self._search is not None

    def answer(self, conversation_id: int, message_id: int, then: Callable[[], bool]) -> bool:
        """Retrieve for the user message `message_id`, just stored, keep what was found on it,
        then `then()` starts its reply (at once for a chat that reads no knowledge). True when
        the reply started or will start."""
        base = self._knowledge()
        try:
            params = self._store.get_conversation(conversation_id).params
            path = self._store.path_to(message_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return False
        collections = chat_collections(params)
        previous = previous_user_text([(m.role, m.content) for m in path])
        if base is None or not collections or not (path[-1].content + previous).strip():
            return then()  # nothing to read, or no words to search for (a picture alone)
        context = params.get("context_length")
        ask = TurnQuery(
            collections,
            path[-1].content,
            previous,
            self._budget_setting(),
            context if isinstance(context, int) and not isinstance(context, bool) else None,
            local=self._remote_model(conversation_id) is None,
        )
        self._tokens += 1
        search = self._search = _Search(self._tokens, conversation_id, message_id, then)
        self.busyChanged.emit(True)
        self.conversationChanged.emit(conversation_id)
        self.searching.emit(KnowledgeSearch(conversation_id, message_id, True))

        def run(engine: EngineLike | None) -> Retrieval:
            return retrieve_turn(engine, base, ask)

        self._worker.call(
            run,
            on_done=lambda found: self._found(search, found),
            on_error=lambda message: self._failed(search, message),
        )
        return True

    def stop(self) -> None:
        """Stop searching: the message stays, without excerpts, and no reply starts."""
        search = self._search
        if search is None:
            return
        self._end(search)
        self.busyChanged.emit(False)
        self.notice.emit(STOPPED)

    def _found(self, search: _Search, found: Retrieval) -> None:
        if self._search is not search:
            return  # stopped meanwhile: what it found is dropped
        if found.excerpts:
            records = [excerpt.as_record() for excerpt in found.excerpts]
            try:
                self._store.add_excerpts(search.message_id, records)
            except NotFoundError:
                self._end(search)  # the message was deleted meanwhile: nothing to answer
                self.busyChanged.emit(False)
                return
            except StoreError as exc:
                self.notice.emit(f"The knowledge found could not be kept: {exc}")
        self._continue(search)

    def _failed(self, search: _Search, message: str) -> None:
        if self._search is not search:
            return
        self.notice.emit(
            f"The knowledge could not be searched ({message}); the reply is written without it."
        )
        self._continue(search)

    def _continue(self, search: _Search) -> None:
        self._end(search)
        if not search.then():
            self.busyChanged.emit(False)  # else the reply's own busy state carries on

    def _end(self, search: _Search) -> None:
        self._search = None
        self.searching.emit(KnowledgeSearch(search.conversation_id, search.message_id, False))
