"""A turn's retrieval, as the chat and the local server run it: on the inference worker thread
(the query's embedding may run on the model's own thread, and the budget is counted with the
loaded model's tokenizer), once per user message, for the message and the person's previous one.

`KnowledgeBase` is what the knowledge index offers the chat (`app.knowledge`): its collections,
a retrieval within a budget of tokens, the digest each document has now (so an old turn's
source can say "changed since"), and the documents and their text for the knowledge tools.
Retrieval is deterministic for one state of the index: the same request twice gives the same
excerpts, so the same prompt, so the cache answers the second time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app.knowledge.excerpts import Excerpt, Retrieval

if TYPE_CHECKING:
    from app.generation.worker_engine import EngineLike
    from app.knowledge.context import ExcerptContext, ExcerptPlace

# Without the model's context (a remote model, or none loaded), a turn's excerpts take at most
# this many tokens; otherwise a quarter of the chat's context (a setting overrides both).
DEFAULT_BUDGET_TOKENS = 2048
CONTEXT_SHARE = 4
# A tokenizer-free estimate (a remote model's, which is not here): about four characters each.
CHARS_PER_TOKEN = 4

CountTokens = Callable[[str], int]


@dataclass(frozen=True)
class DocumentInfo:
    """A document a collection holds, as the knowledge tools list it."""

    collection: str
    path: str  # absolute
    document_sha256: str
    pages: int | None = None  # for paged formats


class KnowledgeBase(Protocol):
    """What the chat needs of the knowledge index. `collection_names`, `current_digests` and
    `excerpt_context` are asked on the GUI thread (fast, indexed lookups); `retrieve`,
    `documents` and `document_excerpts` on the inference worker thread. Unknown collection
    names are skipped, never an error: a chat may name one removed since. An index that cannot
    be read raises its own error (`app.knowledge.records.KnowledgeError`), which the caller
    says."""

    def collection_names(self) -> list[str]: ...

    def retrieve(
        self,
        collections: Sequence[str],
        query: str,
        previous_user_message: str,
        budget_tokens: int,
        count_tokens: CountTokens,
    ) -> Retrieval: ...

    def current_digests(self, documents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The digest of each (collection, path)'s text as indexed now; a document no longer
        indexed there is left out."""
        ...

    def excerpt_context(self, place: ExcerptPlace) -> ExcerptContext:
        """An old turn's excerpt in its page (or the text around it) as indexed now, or why
        not (`ExcerptContext.missing`): for the window, on the GUI thread."""
        ...

    def documents(self, collections: Sequence[str]) -> list[DocumentInfo]: ...

    def document_excerpts(self, collections: Sequence[str], path: str) -> list[Excerpt]:
        """The whole document as its chunks, in order (they may overlap)."""
        ...


@dataclass(frozen=True)
class TurnQuery:
    """What one user turn's retrieval asks: the chat's collections, the new message and the
    person's previous one, and the budget (0: a quarter of the chat's context)."""

    collections: tuple[str, ...]
    text: str
    previous: str
    budget_setting: int = 0
    chat_context: int | None = None  # the chat's own context limit, when it set one
    local: bool = True  # counted with the loaded model's tokenizer (False: a remote model)


def turn_budget(setting: int, context: int | None) -> int:
    """The tokens a turn's excerpts may take: the setting when given, else a quarter of the
    context, else DEFAULT_BUDGET_TOKENS."""
    if setting > 0:
        return setting
    if context:
        return max(1, context // CONTEXT_SHARE)
    return DEFAULT_BUDGET_TOKENS


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def token_counter(engine: EngineLike | None) -> CountTokens:
    """Counts the tokens a text adds to a user turn, as the loaded model reads it (its chat
    template and tokenizer, as an attached file is counted); an estimate without a model."""
    if engine is None:
        return estimate_tokens
    bare = engine.count_prompt_tokens([{"role": "user", "content": ""}])
    return lambda text: engine.count_prompt_tokens([{"role": "user", "content": text}]) - bare


def retrieve_turn(engine: EngineLike | None, base: KnowledgeBase, ask: TurnQuery) -> Retrieval:
    """On the worker thread: the excerpts for one user turn, within its budget."""
    local = engine if ask.local else None
    context = ask.chat_context
    if local is not None and local.context_length:
        context = min(context or local.context_length, local.context_length)
    return base.retrieve(
        ask.collections,
        ask.text,
        ask.previous,
        turn_budget(ask.budget_setting, context),
        token_counter(local),
    )


def previous_user_text(contents: Sequence[tuple[str, str]]) -> str:
    """The person's message before the last one on a path of (role, text) pairs ("" if none)."""
    users = [text for role, text in contents if role == "user"]
    return users[-2] if len(users) > 1 else ""
