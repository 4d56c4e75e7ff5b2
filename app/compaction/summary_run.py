"""A summary written into its message as a reply is: one request to the worker (or the chat's
remote server), its tokens streamed into the store (at least once a second), its stats,
reasoning and provenance written when it ends, a Stop of its own. What the app then does with
it (keep the turns, or abandon it) is `app.compaction.compactor`'s; this part only writes it.

It is a `SiblingReplies` of one: the same writer, flush and shutdown rules as Regenerate ×N's
and Compare's replies, so a summary being written when the window closes keeps its text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal, Slot

from app.generation.reply_events import ReplyPrefill
from app.generation.reply_generation import ReplyBackend
from app.generation.sibling_replies import Sibling, SiblingReplies, SiblingRun
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import GenerationFinished, PrefillProgress, TokensReady
from app.generation.worker_requests import GenerationRequest, RequestModel
from app.store.conversations import Store


class SummaryRun(SiblingReplies):
    """`replyUpdated` carries the summary's text so far, `replyFinished` how it ended."""

    prefill = Signal(ReplyPrefill)

    def __init__(
        self,
        store: Store,
        backends: Sequence[ReplyBackend],
        request_ids: Callable[[], int],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(store, None, parent)
        self._next_id = request_ids
        self._request: tuple[int, ReplyBackend] | None = None
        for backend in backends:
            backend.tokensReady.connect(self._on_tokens)
            backend.prefillProgress.connect(self._on_prefill)
            backend.generationFinished.connect(self._on_finished)
            backend.generationFailed.connect(self._on_failed)

    def start(
        self,
        backend: ReplyBackend,
        summary_id: int,
        messages: list[dict],
        params: dict,
        model_id: str | None,
        model: RequestModel | None = None,
    ) -> None:
        """Write the summary `summary_id` (begun "streaming") as the reply to `messages`, on
        `backend` (with `model`: a model of its own, loaded by the worker if needed)."""
        summary = self.store.get_message(summary_id)
        sibling = Sibling(summary_id, self.store.reply_writer(summary_id))
        run = self._begin(summary.conversation_id, [sibling])
        rid = self._next_id()
        self._request = (rid, backend)
        backend.submit(
            GenerationRequest(
                rid,
                messages,
                dict(params),
                conversation_id=run.conversation_id,
                model_id=model_id,
                cancel=sibling.cancel,
                model=model,
            )
        )

    def _stopping(self, index: int) -> None:
        if self._request is not None:
            rid, backend = self._request
            backend.cancel(rid)  # a remote summary stops by its task

    def _mine(self, request_id: int | None) -> SiblingRun | None:
        run = self._run
        ours = self._request is not None and self._request[0] == request_id
        return run if ours and run is not None else None

    @Slot(object)
    def _on_tokens(self, tokens: TokensReady) -> None:
        if (run := self._mine(tokens.request_id)) is not None:
            self._on_text(run, 0, tokens.text, tokens.reasoning)

    @Slot(object)
    def _on_prefill(self, progress: PrefillProgress) -> None:
        if (run := self._mine(progress.request_id)) is not None:
            message_id = run.siblings[0].message_id
            self.prefill.emit(ReplyPrefill(message_id, progress.done, progress.total))

    @Slot(object)
    def _on_finished(self, finished: GenerationFinished) -> None:
        if (run := self._mine(finished.request_id)) is None:
            return
        written = run.siblings[0].writer.text
        if finished.text.startswith(written) and len(finished.text) > len(written):
            self._on_text(run, 0, finished.text[len(written) :])
        cancelled = finished.finish_reason == "cancelled"
        self._finish(
            run,
            0,
            "stopped" if cancelled else "complete",
            {**finished.stats, "finish_reason": finished.finish_reason},
            reasoning=finished.reasoning,
            provenance=finished.provenance,
        )

    @Slot(object)
    def _on_failed(self, failure: WorkerFailure) -> None:
        if (run := self._mine(failure.request_id)) is not None:
            self._finish(run, 0, failure.reply_status, None, error=failure.message)

    def _end(self) -> None:
        self._request = None
        super()._end()
