"""Replays asked for from the window: the plan read from the store on the GUI thread, the run on
the inference worker (queued behind any reply being written; the loaded engine when it runs the
recorded model, else that model loaded for the replay alone), the outcome handed back on the GUI
thread. Nothing is written unless the person keeps the replayed reply, as a sibling."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.replay.details import ReplyDetails, reply_details
from app.replay.outcome import ReplayOutcome
from app.replay.plan import ReplayError, plan_replay
from app.store.conversations import Store
from app.store.records import StoreError

if TYPE_CHECKING:
    from app.generation.worker import InferenceWorker
    from app.generation.worker_engine import EngineLike
    from app.generation.worker_events import ModelLoaded


class Replays(QObject):
    finished = Signal(ReplayOutcome)
    failed = Signal(int, str)  # (message id, why it could not run)
    kept = Signal(int)  # the conversation a replayed reply was kept in, as a sibling

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        model_info: Callable[[], ModelLoaded | None],
        parent: QObject | None = None,
    ) -> None:
        """`model_info`: the worker's info on the model it holds (its `identity` says what the
        model was when it loaded)."""
        super().__init__(parent)
        self.store = store
        self._worker = worker
        self._model_info = model_info

    def details(self, message_id: int) -> ReplyDetails:
        """Raises StoreError for a message that is gone."""
        return reply_details(self.store.get_message(message_id))

    def start(self, message_id: int) -> bool:
        """Replay reply `message_id`; False (with `failed` emitted) when it cannot run."""
        try:
            plan = plan_replay(self.store, message_id)
        except (ReplayError, StoreError) as exc:
            self.failed.emit(message_id, str(exc))
            return False

        info = self._model_info()
        identity = info.identity if info is not None else None

        def replay(engine: EngineLike | None) -> ReplayOutcome:
            from app.replay.run import run_replay  # on the worker thread: it loads MLX

            return run_replay(plan, engine, identity)

        self._worker.call(
            replay, self.finished.emit, lambda message: self.failed.emit(message_id, message)
        )
        return True

    def keep(self, outcome: ReplayOutcome) -> int | None:
        """Store the replayed reply as a sibling of the one replayed (the new active branch);
        its id, or None when the reply is gone (said through `failed`)."""
        try:
            original = self.store.get_message(outcome.message_id)
            if original.parent_id is None:  # a summary: edit it to keep another version
                raise StoreError("A replayed summary is compared, not kept: edit the summary.")
            reply = self.store.begin_reply(
                original.conversation_id, original.parent_id, original.model_id, original.params
            )
            self.store.finish_reply(
                reply.id,
                outcome.text,
                stats={"generated_tokens": outcome.replayed_tokens},
                reasoning=outcome.reasoning,
                tool_calls=list(outcome.tool_calls) or None,
                provenance=outcome.provenance,
            )
        except StoreError as exc:
            self.failed.emit(outcome.message_id, str(exc))
            return None
        self.kept.emit(original.conversation_id)
        return reply.id
