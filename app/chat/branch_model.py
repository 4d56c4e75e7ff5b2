"""A follow-up on a branch uses that branch's model: the chat's model follows the model that
wrote the reply the person continues from.

A chat has one model (`Conversation.model_id`, what the model picker shows and what replies
use), but after a compare its branches were written by different models. When the person moves
to a branch whose last reply another model wrote than the branch they left (‹ k/n ›, the branch
map, a search hit), or keeps one answer of a compare, the chat's model becomes that reply's
model and is loaded (at once when a compare left it loaded beside the main one), and
`modelFollowed` says so, for the window to tell the person. Moving between
branches written by the same model changes nothing, so a model the person picked by hand stays
picked until they move to another model's branch.

Only a model this app can run is followed: one in the library or on a connection. A reply
imported from another app names a model that may be neither (e.g. "gpt-4o"), and one written
here but whose model was deleted since cannot be continued by it either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance

from app.generation.worker_models import load_refusal, same_folder
from app.remote.connections import is_remote
from app.store.conversations import Message, Store, StoreError

if TYPE_CHECKING:
    from app.generation.worker import InferenceWorker
    from app.library.entries import ModelInfo


@dataclass(frozen=True)
class ModelFollowed:
    """The chat's model became `model_id`, the model of the branch now shown (was
    `previous`)."""

    conversation_id: int
    model_id: str
    previous: str | None


def reply_model(path: Sequence[Message]) -> str | None:
    """The model of the last reply written here on `path` (None when it has none): an
    imported reply has no stats, and its model is a label only."""
    for message in reversed(path):
        if message.role == "assistant" and message.model_id and message.stats:
            return message.model_id
    return None


@dataclass(frozen=True)
class FollowSetup:
    """What following needs besides the store: the library (None: none, so only remote models
    are followed), whether connections exist, the worker (what it holds), the CPU preference
    for float32 weights, how to load a model folder, and where refusals are told."""

    models_dir: Path | None
    has_connections: bool
    worker: InferenceWorker
    cpu_float32: Callable[[], str]
    load_model: Callable[[Path], None]
    notice: SignalInstance


class BranchModels:
    def __init__(self, store: Store, setup: FollowSetup, followed: SignalInstance) -> None:
        self._store = store
        self._setup = setup
        self._followed = followed

    def shown_model(self, conversation_id: int) -> str | None:
        """The model of the branch shown now (its last reply's)."""
        try:
            return reply_model(self._store.active_path(conversation_id))
        except StoreError:
            return None

    def follow(
        self, conversation_id: int, left: str | None = None, always: bool = False
    ) -> ModelFollowed | None:
        """After a move from a branch whose model was `left`: the chat's model becomes the
        shown branch's, when that is another model (`always`: whatever was left, as a kept
        compare answer asks) and one the app can run; a library model is loaded."""
        shown = self.shown_model(conversation_id)
        if shown is None or (shown == left and not always):
            return None
        info = None if is_remote(shown) else self._library_model(shown)
        if info is None and not (is_remote(shown) and self._setup.has_connections):
            return None
        try:
            previous = self._store.get_conversation(conversation_id).model_id
            if previous != shown:
                self._store.update_settings(conversation_id, model_id=shown)
        except StoreError:
            return None
        if info is not None:
            self._load(info)
        if previous == shown:
            return None
        followed = ModelFollowed(conversation_id, shown, previous)
        self._followed.emit(followed)
        return followed

    def load(self, model_id: str) -> None:
        """Load the library model `model_id` back unless it is the main one (another model ran
        in its place for a while: a summary's own model)."""
        info = self._library_model(model_id)
        if info is not None:
            self._load(info)

    def _library_model(self, model_id: str) -> ModelInfo | None:
        if self._setup.models_dir is None:
            return None
        from app.library.entries import list_models  # file work: imported when first needed

        return next(
            (
                m
                for m in list_models(self._setup.models_dir)
                if m.path.name == model_id and m.problem is None
            ),
            None,
        )

    def _load(self, info: ModelInfo) -> None:
        """Load the followed model unless it is the main one: at once when a compare left it
        loaded, else in place of what is held, if its weights fit."""
        held = self._setup.worker.held_models()
        if any(h.main and same_folder(h.path, info.path) for h in held):
            return
        refusal = load_refusal(info, held, self._setup.cpu_float32())
        if refusal is not None:
            self._setup.notice.emit(refusal)
            return
        self._setup.load_model(info.path)
