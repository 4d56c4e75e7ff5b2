"""What the branch map shows, kept up to date: the outline of the open conversation (built on the
GUI thread from the store, at once) and each node's cache state (asked of the worker, which owns
the caches; plain values come back; a branch's in the caches of the model that wrote it, when
the worker holds it), with an estimated time to first token from rates measured on finished
replies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.chat.branch_model import reply_model
from app.chat.branch_outline import OutlineNode, build_outline, paths_to, walk
from app.generation.prompt_messages import prompt_messages
from app.generation.ttft_estimate import MeasuredRates, estimate_ttft
from app.generation.worker import EngineLike, InferenceWorker
from app.generation.worker_events import GenerationFinished
from app.store.conversations import Store, StoreError

if TYPE_CHECKING:
    from inference.engine.cache_state import CacheTier, PathCacheState


@dataclass(frozen=True, slots=True)
class BranchOutline:
    """The outline of `conversation_id` (None: no conversation is open, the outline is empty)."""

    conversation_id: int | None
    nodes: tuple[OutlineNode, ...]


@dataclass(frozen=True, slots=True)
class BranchState:
    """Where a continuation at a branch would find its prompt's `tokens`: the deepest reusable
    one's `tier` ("memory", "disk" or "none"), how many are in memory, on disk (`disk_bytes` to
    read) or not cached, and the estimated seconds to its first token (None before any reply
    was measured)."""

    tokens: int
    tier: CacheTier
    memory_tokens: int
    disk_tokens: int
    uncached_tokens: int
    disk_bytes: int
    ttft_s: float | None


@dataclass(frozen=True, slots=True)
class BranchStates:
    """The cache state of each branch of `conversation_id`, by the last message id of its run."""

    conversation_id: int
    states: Mapping[int, BranchState]


class BranchMapSource(QObject):
    outlineReady = Signal(BranchOutline)
    statesReady = Signal(BranchStates)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        parent: QObject | None = None,
        detail: Callable[[], int | None] = lambda: None,
    ):
        """`detail()` is the image detail the loaded model is given: the states are looked up
        for the prompts its replies would send."""
        super().__init__(parent)
        self.store = store
        self.worker = worker
        self._detail = detail
        self.rates = MeasuredRates()
        self._conversation_id: int | None = None
        self._generation = 0  # answers for an older refresh are dropped
        worker.generationFinished.connect(self._on_finished)

    def refresh(self, conversation_id: int | None) -> list[OutlineNode]:
        """Rebuild the outline now and ask the worker for its cache states."""
        self._conversation_id = conversation_id
        self._generation += 1
        if conversation_id is None:
            self.outlineReady.emit(BranchOutline(None, ()))
            return []
        try:
            messages = self.store.all_messages(conversation_id)
            active = {m.id for m in self.store.active_path(conversation_id)}
        except StoreError:
            return []
        nodes = build_outline(messages, active)
        self.outlineReady.emit(BranchOutline(conversation_id, tuple(nodes)))
        ends = [node.last_id for node in walk(nodes)]
        paths = paths_to(messages, ends)
        detail = self._detail()
        prompts = [prompt_messages(self.store, conversation_id, paths[end], detail) for end in ends]
        # A branch goes on with the model that wrote it (app.chat.branch_model): its caches are
        # that model's, when it is held; others are read in the main model's.
        models = [reply_model(paths[end]) or "" for end in ends]
        generation = self._generation

        def states(engines: dict[str, EngineLike]) -> list[PathCacheState] | None:
            main = next(iter(engines.values()), None)
            owners = [engines.get(m, main) for m in models]
            found: dict[int, PathCacheState] = {}
            for engine in {id(e): e for e in owners}.values():  # each engine asked once
                reader = getattr(engine, "cache_state", None)
                if reader is None:
                    return None
                mine = [i for i, owner in enumerate(owners) if owner is engine]
                found.update(zip(mine, reader([prompts[i] for i in mine]), strict=True))
            return [found[i] for i in range(len(prompts))]

        self.worker.call_held(
            states,
            on_done=lambda found: self._deliver(generation, conversation_id, ends, found),
            on_error=lambda message: None,  # the map then shows the state as unknown
        )
        return nodes

    def _deliver(
        self,
        generation: int,
        conversation_id: int,
        ends: list[int],
        found: list[PathCacheState] | None,
    ) -> None:
        if generation != self._generation or found is None:
            return
        states = {end: self._branch_state(state) for end, state in zip(ends, found, strict=True)}
        self.statesReady.emit(BranchStates(conversation_id, states))

    def _branch_state(self, state: PathCacheState) -> BranchState:
        """A path's state as the engine's `cache_state` gave it, with its estimated TTFT."""
        return BranchState(
            state.tokens,
            state.tier,
            state.memory_tokens,
            state.disk_tokens,
            state.uncached_tokens,
            state.disk_bytes,
            estimate_ttft(state, self.rates),
        )

    def _on_finished(self, finished: GenerationFinished) -> None:
        self.rates.observe(finished.stats)
