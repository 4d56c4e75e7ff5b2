"""Compare: one message answered by 2 to 4 models, each answer a sibling reply labelled with its
model (the message's `model_id`; its provenance names the model too).

`start` begins one empty reply per model under the message, shows the branch of the plan's
`active` column (the chat's own model's, else the first), and asks each model: a local one as a
worker request naming its folder (`RequestModel`: held beside the others when the plan says
they fit together, else loaded in place of them, one after another, in the plan's order), a
remote one through its backend, which streams meanwhile. Each answer streams into its own
message and column (`SiblingReplies`), with its own stats, stop and "Keep this one".

A compare offers no tools (several branches would each ask to run them: continue on one to use
them) and guesses ahead only from the conversation, never with a draft model (the same tokens:
speculation never changes them). A failure, a stop or a close keeps the person's message and
every answer written so far. In blind mode the models' names are hidden (`hidden_ids`) until one
answer is kept, or the person asks to see them (`reveal`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot

from app.generation.compare_plan import CompareModel, ComparePlan
from app.generation.prompt_messages import ImageDetailFor, missing_image, no_detail, prompt_messages
from app.generation.reply_generation import DEFAULT_PARAMS, ReplyBackend
from app.generation.sibling_replies import Sibling, SiblingReplies, SiblingRun
from app.generation.worker import InferenceWorker
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import (
    GenerationFinished,
    PrefillProgress,
    TokensReady,
)
from app.generation.worker_requests import GenerationRequest, ModelPreparing, RequestModel
from app.store.conversations import Store


@dataclass(frozen=True)
class CompareStarted:
    """A compare began: one column per model, in order (their names shown unless `blind`),
    `notice` how the run uses memory ("" when there is nothing to say), `states` each column's
    first line until its answer begins."""

    conversation_id: int
    message_ids: tuple[int, ...]
    models: tuple[CompareModel, ...]
    blind: bool
    notice: str
    states: tuple[str, ...]


@dataclass(frozen=True)
class CompareProgress:
    """Column `index` before its first token: loading its model, reading the prompt."""

    index: int
    text: str


def blind_label(index: int) -> str:
    return f"Model {chr(ord('A') + index)}"


class CompareGeneration(SiblingReplies):
    started = Signal(CompareStarted)
    progress = Signal(CompareProgress)
    revealed = Signal(int)  # a blind run's names may show now (its conversation)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        remote: ReplyBackend | None,
        request_ids: Callable[[], int],
        default_overflow: Callable[[], str],
        parent: QObject | None = None,
        detail_for: ImageDetailFor = no_detail,
    ) -> None:
        super().__init__(store, None, parent)
        self._worker = worker
        self._remote = remote
        self._next_id = request_ids
        self._default_overflow = default_overflow
        self._detail_for = detail_for
        self._plan: ComparePlan | None = None
        self._requests: dict[int, int] = {}  # request id -> column of the run in progress
        self._backends: dict[int, ReplyBackend] = {}
        self._hidden: frozenset[int] = frozenset()
        for backend in (worker, *([remote] if remote is not None else [])):
            backend.tokensReady.connect(self._on_tokens)
            backend.prefillProgress.connect(self._on_prefill)
            backend.generationFinished.connect(self._on_finished)
            backend.generationFailed.connect(self._on_failed)
        worker.modelPreparing.connect(self._on_preparing)

    def hidden_ids(self) -> frozenset[int]:
        """The replies whose models' names are hidden (a blind run not yet decided)."""
        return self._hidden

    def reveal(self) -> None:
        """Show a blind run's names (the person looked without picking, or picked)."""
        run = self._run or self._last
        if self._hidden and run is not None:
            self._hidden = frozenset()
            self.revealed.emit(run.conversation_id)

    def start(
        self, conversation_id: int, parent_id: int, plan: ComparePlan, blind: bool = False
    ) -> list[int]:
        """Begin one reply per model of `plan` to the message `parent_id` and ask each model;
        returns their message ids. Raises StoreError when they could not be begun (nothing is
        asked then)."""
        self.reveal()  # a blind run still undecided is decided by starting another
        conversation = self.store.get_conversation(conversation_id)
        params = {**DEFAULT_PARAMS, "overflow": self._default_overflow(), **conversation.params}
        if params.get("speculation") == "draft":
            params["speculation"] = "prompt_lookup"
        siblings = []
        for model in plan.models:
            reply = self.store.begin_reply(conversation_id, parent_id, model.model_id, params)
            siblings.append(Sibling(reply.id, self.store.reply_writer(reply.id)))
        self.store.switch_to_sibling(siblings[plan.active].message_id)
        path = self.store.active_path(conversation_id)[:-1]  # up to the message answered
        run = self._begin(conversation_id, siblings)
        self._plan, self._requests, self._backends = plan, {}, {}
        self._hidden = frozenset(s.message_id for s in siblings) if blind else frozenset()
        ids = self.message_ids()
        self.started.emit(
            CompareStarted(
                conversation_id,
                tuple(ids),
                plan.models,
                blind,
                plan.blind_notice if blind else plan.notice,
                tuple(_first_state(plan, i, blind) for i in range(len(plan.models))),
            )
        )
        refused = missing_image(self.store, path)
        if refused is not None:
            self.notice.emit(refused)
            self._fail_rest(run, refused)
            return ids
        remote_columns = [i for i, m in enumerate(plan.models) if not m.local]
        for index in (*remote_columns, *plan.order):
            model = plan.models[index]
            messages = prompt_messages(
                self.store, conversation_id, path, self._detail_for(model.model_id)
            )
            self._ask(run, index, messages, params)
        return ids

    def _ask(self, run: SiblingRun, index: int, messages: list[dict], params: dict) -> None:
        assert self._plan is not None
        model = self._plan.models[index]
        backend = self._worker if model.local else self._remote
        if backend is None:
            self._finish(
                run,
                index,
                "error",
                None,
                error=f"{model.name} is on a server, and no connections are set up.",
            )
            return
        rid = self._next_id()
        self._requests[rid], self._backends[rid] = index, backend
        wanted = (
            None
            if model.path is None
            else RequestModel(model.path, model.weights_bytes, self._plan.together_paths)
        )
        backend.submit(
            GenerationRequest(
                rid,
                messages,
                dict(params),
                conversation_id=run.conversation_id,
                model_id=model.model_id,
                cancel=run.siblings[index].cancel,
                model=wanted,
            )
        )

    def _stopping(self, index: int) -> None:
        for rid, column in self._requests.items():
            if column == index:
                self._backends[rid].cancel(rid)  # a remote answer stops by its task

    def _kept(self, run: SiblingRun, index: int) -> None:
        self.reveal()

    def _column(self, request_id: int) -> tuple[SiblingRun, int] | None:
        """The run in progress and the column `request_id` answers (None: not this run's)."""
        run = self._run
        index = self._requests.get(request_id)
        return None if run is None or index is None else (run, index)

    @Slot(object)
    def _on_preparing(self, preparing: ModelPreparing) -> None:
        found = self._column(preparing.request_id)
        if found is not None:
            how = "beside the others" if preparing.beside else "in place of the others"
            self.progress.emit(CompareProgress(found[1], f"Loading {self._label(found[1])} {how}…"))

    @Slot(object)
    def _on_prefill(self, progress: PrefillProgress) -> None:
        found = self._column(progress.request_id)
        if found is None:
            return
        done, total = progress.done, progress.total
        text = (
            "Waiting for the server…"
            if total < 0
            else f"Reading the prompt… {done * 100 // max(total, 1)}%"
        )
        self.progress.emit(CompareProgress(found[1], text))

    @Slot(object)
    def _on_tokens(self, tokens: TokensReady) -> None:
        found = self._column(tokens.request_id)
        if found is not None:
            self._on_text(*found, tokens.text, tokens.reasoning)

    @Slot(object)
    def _on_finished(self, finished: GenerationFinished) -> None:
        found = self._column(finished.request_id)
        if found is None:
            return
        run, index = found
        writer = run.siblings[index].writer
        missing = finished.text[len(writer.text) :]
        if missing and finished.text.startswith(writer.text):
            self._on_text(run, index, missing)
        reason = finished.finish_reason
        stats = {**finished.stats, "finish_reason": reason}
        status = "stopped" if reason == "cancelled" else "complete"
        self._finish(
            run, index, status, stats, reasoning=finished.reasoning, provenance=finished.provenance
        )

    @Slot(object)
    def _on_failed(self, failure: WorkerFailure) -> None:
        found = None if failure.request_id is None else self._column(failure.request_id)
        if found is None or self._plan is None:
            return
        run, index = found
        self.notice.emit(f"{self._label(index)} could not answer: {failure.message}")
        self._finish(run, index, failure.reply_status, None, error=failure.message)

    def _label(self, index: int) -> str:
        assert self._plan is not None
        return blind_label(index) if self._hidden else self._plan.models[index].name


def _first_state(plan: ComparePlan, index: int, blind: bool) -> str:
    """What column `index` says until its answer begins: where it stands in the run."""
    if not plan.models[index].local:
        return "Asking the server…"
    place = plan.order.index(index)
    if place == 0:
        return "Starting…"
    if plan.together:
        return "Waiting for its turn: one answer is computed at a time…"
    before = plan.order[:place]
    names = ", ".join(blind_label(i) if blind else plan.models[i].name for i in before)
    return f"Waiting: runs after {names}, one after another…"
