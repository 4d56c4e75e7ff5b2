"""Knowledge as the chat controller composes it: the index (set once the app has opened it; until
then, and without one, chats read nothing), the retrieval for each new user message (`turns`),
each reply's sources for the window (`sources`) and a source read in its page
(`app.knowledge.context`), and the knowledge tools (`tools`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.chat.knowledge.choice import chat_budget, chat_collections
from app.chat.knowledge.sources import ReplySources, reply_sources
from app.chat.knowledge.tools import KnowledgeTools
from app.chat.knowledge.turns import KnowledgeTurns
from app.knowledge.context import ExcerptContext, ExcerptPlace, MissingContext, no_context
from app.knowledge.records import KnowledgeError
from app.store.conversations import StoreError

if TYPE_CHECKING:
    from app.generation.knowledge_retrieval import KnowledgeBase
    from app.generation.worker import InferenceWorker
    from app.settings import Preferences
    from app.store.conversations import Store
    from app.store.records import Message

_log = logging.getLogger(__name__)


class ChatKnowledge(QObject):
    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        preferences: Preferences,
        remote_model: Callable[[int], str | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._base: KnowledgeBase | None = None
        self.turns = KnowledgeTurns(store, worker, lambda: self._base, remote_model, parent=self)
        self.tools = KnowledgeTools(worker, lambda: self._base, store, remote_model)

    @property
    def base(self) -> KnowledgeBase | None:
        return self._base

    def set_base(self, base: KnowledgeBase | None) -> None:
        """The knowledge index chats read from now on (None: none)."""
        self._base = base

    def names(self) -> list[str]:
        """The collections the index holds (none without one, or while it cannot be read)."""
        try:
            return self._base.collection_names() if self._base is not None else []
        except KnowledgeError as exc:
            _log.warning("The knowledge index could not be read: %s", exc)
            return []

    def collections(self, conversation_id: int) -> tuple[str, ...]:
        """The collections a chat reads (none without an index, or for a chat gone)."""
        if self._base is None:
            return ()
        try:
            return chat_collections(self._store.get_conversation(conversation_id).params)
        except StoreError:
            return ()

    def budget_setting(self, conversation_id: int) -> int | None:
        """The budget setting of a chat that reads knowledge (0: a quarter of its context),
        None for one that reads none (or a chat gone)."""
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            return None
        return chat_budget(params) if self._base is not None and chat_collections(params) else None

    def sources(self, path: list[Message]) -> dict[int, ReplySources]:
        """Each reply on `path` that used knowledge, by id: its turn's sources as the window
        shows them, each compared with what the index holds now."""
        return reply_sources(path, self._base)

    def excerpt_context(self, place: ExcerptPlace) -> ExcerptContext:
        """A source's page (or the text around it) as the index holds it now, for the window to
        show it in place; why not, when the index cannot give it (none, unreadable, the file
        changed or gone)."""
        if self._base is None:
            return no_context(MissingContext.NO_INDEX)
        try:
            return self._base.excerpt_context(place)
        except KnowledgeError as exc:  # the index's file could not be opened
            return no_context(MissingContext.UNREADABLE, str(exc))
