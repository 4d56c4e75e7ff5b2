"""What the branch map shows, kept up to date: the outline of the open conversation (built on the
GUI thread from the store, at once) and each node's cache state (asked of the worker, which owns
the caches; plain values come back; a branch's in the caches of the model that wrote it, when
the worker holds it), with an estimated time to first token from rates measured on finished
replies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.chat.branch_model import reply_model
from app.chat.branch_outline import OutlineNode, build_outline, paths_to, walk
from app.generation.prompt_messages import prompt_messages
from app.generation.ttft_estimate import MeasuredRates, estimate_ttft
from app.generation.worker import EngineLike, InferenceWorker
from app.store.conversations import Store, StoreError


class BranchMapSource(QObject):
    outlineReady = Signal(object)  # {"conversation_id", "nodes": [OutlineNode]}
    # {"conversation_id", "states": {last_id: {..cache state.., "ttft_s": float | None}}}
    statesReady = Signal(object)

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
            self.outlineReady.emit({"conversation_id": None, "nodes": []})
            return []
        try:
            messages = self.store.all_messages(conversation_id)
            active = {m.id for m in self.store.active_path(conversation_id)}
        except StoreError:
            return []
        nodes = build_outline(messages, active)
        self.outlineReady.emit({"conversation_id": conversation_id, "nodes": nodes})
        ends = [node.last_id for node in walk(nodes)]
        paths = paths_to(messages, ends)
        detail = self._detail()
        prompts = [prompt_messages(self.store, conversation_id, paths[end], detail) for end in ends]
        # A branch goes on with the model that wrote it (app.chat.branch_model): its caches are
        # that model's, when it is held; others are read in the main model's.
        models = [reply_model(paths[end]) or "" for end in ends]
        generation = self._generation

        def states(engines: dict[str, EngineLike]) -> list[dict[str, Any]] | None:
            main = next(iter(engines.values()), None)
            owners = [engines.get(m, main) for m in models]
            found: dict[int, dict[str, Any]] = {}
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
        self, generation: int, conversation_id: int, ends: list[int], found: list | None
    ) -> None:
        if generation != self._generation or found is None:
            return
        states = {
            end: {**state, "ttft_s": estimate_ttft(state, self.rates)}
            for end, state in zip(ends, found, strict=True)
        }
        self.statesReady.emit({"conversation_id": conversation_id, "states": states})

    def _on_finished(self, payload: dict[str, Any]) -> None:
        self.rates.observe(payload.get("stats") or {})
