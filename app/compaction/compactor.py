"""Compaction for the chat controller: *Summarise up to Here* on a message, `/compact` in the
composer, and the overflow policy *Summarise older turns*, each making a compacted branch
(`app.store.compaction`); editing a summary; asking the full chat the same question.

One at a time, like a reply (the controller counts it busy): the summary is begun as a new root
and written by the chat's model (or the one Preferences › Summaries names) as the next reply of
the path it covers, so that path's cache serves it; the earlier tokens it stands for are counted
on the worker meanwhile. Once written, the turns it keeps are copied below it and the person
goes on there; stopped, failed or empty, it is removed and the branch shown before comes back.
The full chat is never changed either way.

With *Summarise older turns*, a branch whose last reply and prompt took the threshold's share of
the chat's context is summarised before the next reply (automatic), with the person's new
message kept word for word and answered on the compacted branch; or a notice proposes it when
the reply that reached the threshold ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.compaction.events import BranchCompacted, BranchComparison, SummaryProposal
from app.compaction.full_chat import NotCompacted, full_chat_turn
from app.compaction.plan import CompactionPlan, CompactionRefused, plan_compaction, summary_request
from app.compaction.summary_run import SummaryRun
from app.compaction.tokens import ContextUse, context_use, counter, is_due, summarised_prompt
from app.compaction.writer import summary_writer
from app.generation.model_session import ModelState
from app.generation.prompt_messages import missing_image, prompt_messages
from app.generation.reply_events import BUSY_MESSAGE, ReplyPrefill, StreamUpdate
from app.generation.reply_generation import DEFAULT_PARAMS, ReplyBackend
from app.generation.think_settings import template_kwargs
from app.generation.worker_requests import RequestModel
from app.settings import chat_context_length
from app.store.conversations import NotFoundError, StoreError
from app.store.records import Message

if TYPE_CHECKING:
    from app.generation.model_session import ModelSession
    from app.generation.sibling_replies import SiblingEnd, SiblingText
    from app.generation.worker import EngineLike, InferenceWorker
    from app.remote.backend import RemoteBackend
    from app.settings import Preferences
    from app.store.conversations import Store

COMMAND = "/compact"


@dataclass(frozen=True)
class CompactionSetup:
    """What compaction works with besides the store: the worker and the remote backend, the
    preferences, the model session, the library (None: the chat's model writes summaries),
    and what the controller's other parts know: whether anything is being written, a chat's
    remote model, the image detail a model is given, how a reply is started (to a message),
    how the chat's model is loaded back, and the signal that says a reply ended."""

    worker: InferenceWorker
    remote: RemoteBackend | None
    preferences: Preferences
    session: ModelSession
    models_dir: Path | None
    is_busy: Callable[[], bool]
    remote_model: Callable[[int], str | None]
    image_detail: Callable[[str | None], int | None]
    start_reply: Callable[[int, int], bool]
    load_model: Callable[[str], None]
    reply_ended: SignalInstance


@dataclass
class _Job:
    plan: CompactionPlan
    summary_id: int
    back_to: int | None  # the leaf shown before: shown again if the summary is abandoned
    then_reply: bool  # the overflow policy's: the person's kept message is answered next
    restore: str | None  # the chat's model, loaded back once another model wrote the summary
    end: SiblingEnd | None = None


class Compaction(QObject):
    notice = Signal(str)
    conversationsChanged = Signal()
    conversationChanged = Signal(int)
    busyChanged = Signal(bool)
    streamUpdated = Signal(StreamUpdate)
    prefillProgress = Signal(ReplyPrefill)
    proposed = Signal(SummaryProposal)
    compacted = Signal(BranchCompacted)
    compared = Signal(BranchComparison)

    def __init__(
        self, store: Store, setup: CompactionSetup, request_ids: Callable[[], int], parent: QObject
    ) -> None:
        super().__init__(parent)
        self.store = store
        self._setup = setup
        backends: list[ReplyBackend] = [setup.worker, *([setup.remote] if setup.remote else [])]
        self.run = SummaryRun(store, backends, request_ids, parent=self)
        self.run.replyUpdated.connect(self._on_text)
        self.run.replyFinished.connect(self._on_written)
        self.run.ended.connect(self._settle)
        self.run.busyChanged.connect(self.busyChanged)
        self.run.notice.connect(self.notice)
        self.run.prefill.connect(self.prefillProgress)
        setup.reply_ended.connect(self._on_reply_ended)
        self._job: _Job | None = None
        self._comparing: tuple[int, int, int] | None = None  # (chat, reply, full chat's question)

    # -- asked by the person ---------------------------------------------------------------

    def is_busy(self) -> bool:
        return self.run.is_busy()

    def streaming_message_id(self) -> int | None:
        return None if self._job is None else self._job.summary_id

    def summarise(self, message_id: int, focus: str = "", then_reply: bool = False) -> bool:
        """A compacted branch of the path up to `message_id` (*Summarise up to Here*); False,
        with a notice saying why, when it cannot start."""
        if self._setup.is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        try:
            message = self.store.get_message(message_id)
            plan = plan_compaction(
                self.store.path_to(message_id), self._setup.preferences.summaries.keep_turns, focus
            )
            return self._start(message, plan, then_reply)
        except (StoreError, CompactionRefused) as exc:
            self.notice.emit(str(exc))
            return False

    def compact(self, conversation_id: int, focus: str = "") -> bool:
        """`/compact`: summarise the branch shown, up to its last message."""
        try:
            leaf = self.store.get_conversation(conversation_id).active_leaf_id
        except StoreError as exc:
            self.notice.emit(str(exc))
            return False
        if leaf is None:
            self.notice.emit("There is nothing to summarise yet: say something first.")
            return False
        return self.summarise(leaf, focus)

    def command(self, conversation_id: int, text: str) -> bool | None:
        """`text` typed in the composer, when it is `/compact [what matters most]`: whether the
        compaction started; None for any other text (a message to send)."""
        typed = text.strip()
        if typed != COMMAND and not typed.startswith((f"{COMMAND} ", f"{COMMAND}\n")):
            return None
        return self.compact(conversation_id, typed[len(COMMAND) :])

    def takes_turn(self, conversation_id: int, message_id: int) -> bool:
        """Before the reply to the person's new message: whether *Summarise older turns*, set
        to act by itself, summarises first (the reply is then written on the compacted
        branch)."""
        settings = self._setup.preferences.summaries
        use = self._due(conversation_id, automatic=True)
        if use is None or not self.summarise(message_id, then_reply=True):
            return False
        self.notice.emit(
            f"This chat reached {use.share:.0%} of its {use.context:,}-token context (the limit "
            f"for summarising is {settings.threshold:.0%}): older turns are being summarised "
            "into a new branch, and your message is answered there. The full chat is kept."
        )
        return True

    def edit(self, summary_id: int, text: str) -> bool:
        """The person's own version of a summary, as a sibling with the same kept turns."""
        if self._setup.is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        if not text.strip():
            self.notice.emit("A summary cannot be empty.")
            return False
        try:
            leaf = self.store.edit_summary(summary_id, text)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return False
        self.conversationChanged.emit(leaf.conversation_id)
        return True

    def compare_with_full_chat(self, reply_id: int) -> bool:
        """The question reply `reply_id` answers on a compacted branch, asked of the full chat
        (unless it was already), then both answers shown side by side (`compared`)."""
        if self._setup.is_busy():
            self.notice.emit(BUSY_MESSAGE)
            return False
        try:
            turn = full_chat_turn(self.store, reply_id)
        except (StoreError, NotCompacted) as exc:
            self.notice.emit(str(exc))
            return False
        cid = turn.conversation_id
        if turn.answer_id is not None:
            self.compared.emit(BranchComparison(cid, reply_id, turn.answer_id))
            return True
        self._comparing = (cid, reply_id, turn.question_id)
        if not self._setup.start_reply(cid, turn.question_id):
            self._comparing = None
            self._show(reply_id)
            return False
        return True

    def stop(self) -> None:
        self.run.stop()

    def save_after_shutdown(self) -> None:
        self.run.save_after_shutdown()

    # -- the summary ------------------------------------------------------------------------

    def _start(self, message: Message, plan: CompactionPlan, then_reply: bool) -> bool:
        cid = message.conversation_id
        remote = self._setup.remote_model(cid)
        session = self._setup.session
        if remote is None and session.model_state != ModelState.READY:
            self.notice.emit("The model is not ready yet: wait for it to finish loading.")
            return False
        if (refused := missing_image(self.store, list(plan.covered))) is not None:
            self.notice.emit(refused)
            return False
        conversation = self.store.get_conversation(cid)
        model_id, own = (remote, None) if remote else self._writer(session.model_id)
        params = {
            **DEFAULT_PARAMS,
            "overflow": self._setup.preferences.overflow_policy,
            **conversation.params,
        }
        if params.get("speculation") == "draft":
            params["speculation"] = "prompt_lookup"  # the same tokens, no draft model to load
        messages = summary_request(self.store, plan, self._setup.image_detail(model_id))
        summary = self.store.begin_summary(cid, plan.record(), model_id, params)
        restore = session.model_id if own is not None else None
        self._job = _Job(plan, summary.id, conversation.active_leaf_id, then_reply, restore)
        backend: ReplyBackend = self._setup.worker
        if remote and self._setup.remote is not None:
            backend = self._setup.remote
        else:
            self._count(summary.id, plan, conversation.params)
        self.run.start(backend, summary.id, messages, params, model_id, own)
        self.conversationChanged.emit(cid)
        self.conversationsChanged.emit()
        return True

    def _writer(self, chat_model: str | None) -> tuple[str | None, RequestModel | None]:
        """The model that writes summaries (`app.compaction.writer`), said when the one
        Preferences names is gone."""
        preferences = self._setup.preferences
        chosen = preferences.summaries.model_id
        held = tuple(h.path for h in self._setup.worker.held_models() if h.main)
        found = summary_writer(chosen, chat_model, self._setup.models_dir, preferences, held)
        if found is None:
            self.notice.emit(
                f"The summary model “{chosen}” is not in the library any more: the chat's model "
                "writes the summary (Preferences › Summaries)."
            )
            return chat_model, None
        return found

    def _count(self, summary_id: int, plan: CompactionPlan, chat_params: dict) -> None:
        """The earlier tokens the summary stands for, counted by the chat's model on the
        worker (queued ahead of the summary itself) and added to its record."""
        store, cid = self.store, plan.conversation_id
        kwargs = template_kwargs(self._setup.session.model_info, chat_params)
        detail = self._setup.image_detail(self._setup.session.model_id)
        prompts = summarised_prompt(
            plan.covered, lambda path: prompt_messages(store, cid, path, detail)
        )

        def count(engine: EngineLike | None) -> int | None:
            return None if engine is None else prompts.tokens(counter(engine, kwargs))

        def counted(tokens: int | None) -> None:
            try:
                summary = store.get_message(summary_id)
                if tokens is not None:
                    store.set_compaction(summary_id, {**summary.compaction, "stands_for": tokens})
            except NotFoundError:
                pass  # abandoned meanwhile: nothing to count for

        self._setup.worker.call(count, on_done=counted, on_error=self.notice.emit)

    def _on_text(self, text: SiblingText) -> None:
        job = self._job
        if job is not None and text.message_id == job.summary_id:
            cid = job.plan.conversation_id
            self.streamUpdated.emit(StreamUpdate(cid, text.message_id, text.text))

    def _on_written(self, end: SiblingEnd) -> None:
        if self._job is not None and end.message_id == self._job.summary_id:
            self._job.end = end

    def _settle(self, _conversation_id: int) -> None:
        """The summary ended (the run is no longer busy): keep the turns and go on, or
        abandon it."""
        job, self._job = self._job, None
        if job is None:
            return
        cid = job.plan.conversation_id
        try:
            summary = self.store.get_message(job.summary_id)
            if job.end is not None and job.end.status == "complete" and summary.content.strip():
                self._kept(job, summary)
            else:
                self._abandon(job, summary)
        except StoreError as exc:
            self.notice.emit(f"The compacted branch could not be finished: {exc}")
        if job.restore is not None:
            self._setup.load_model(job.restore)
        self.conversationChanged.emit(cid)
        self.conversationsChanged.emit()

    def _kept(self, job: _Job, summary: Message) -> None:
        leaf = self.store.keep_turns(summary.id)
        summary = self.store.get_message(summary.id)
        plan = job.plan
        self.compacted.emit(
            BranchCompacted(
                plan.conversation_id,
                summary.id,
                leaf.id,
                len(plan.covered),
                summary.compaction.get("stands_for"),
                len(plan.kept),
                plan.through.id,
                job.then_reply,
            )
        )
        if job.then_reply:
            self._setup.start_reply(plan.conversation_id, leaf.id)

    def _abandon(self, job: _Job, summary: Message) -> None:
        end = job.end
        self.store.abandon_summary(summary.id, job.back_to)
        if end is not None and end.status == "stopped":
            why = "Summarising was stopped"
        elif end is not None and end.status == "error":
            why = f"The summary could not be written ({end.error or 'an error'})"
        else:
            why = "The model wrote no summary"
        waiting = " Your message is kept there, not yet answered." if job.then_reply else ""
        self.notice.emit(f"{why}: the chat is as it was.{waiting}")

    # -- the overflow policy and the full chat's answers --------------------------------------

    def _due(self, conversation_id: int, automatic: bool) -> ContextUse | None:
        """What the branch shown takes of its context, when *Summarise older turns* is the
        chat's policy, set to act as `automatic` says, and the threshold is reached."""
        preferences = self._setup.preferences
        settings = preferences.summaries
        try:
            conversation = self.store.get_conversation(conversation_id)
            path = self.store.active_path(conversation_id)
        except StoreError:
            return None
        policy = conversation.params.get("overflow") or preferences.overflow_policy
        if policy != "summarise" or settings.automatic != automatic:
            return None
        if self._setup.remote_model(conversation_id):
            return None  # the server's context is not known here
        info = self._setup.session.model_info
        context = chat_context_length(info.context_length if info else None, conversation.params)
        use = context_use(path, context)
        return use if is_due(use, settings.threshold) else None

    def _on_reply_ended(self, conversation_id: int) -> None:
        comparing = self._comparing
        if comparing is not None and comparing[0] == conversation_id:
            self._comparing = None
            self._compared(*comparing)
            return
        use = self._due(conversation_id, automatic=False)
        if use is not None:
            self.proposed.emit(SummaryProposal(conversation_id, use.used, use.context))

    def _compared(self, conversation_id: int, reply_id: int, question_id: int) -> None:
        try:
            answers = [c for c in self.store.children(question_id) if c.role == "assistant"]
        except StoreError:
            answers = []
        self._show(reply_id)
        if answers and answers[-1].content:
            self.compared.emit(BranchComparison(conversation_id, reply_id, answers[-1].id))

    def _show(self, message_id: int) -> None:
        """Show the branch through `message_id` again (where the person asked from)."""
        try:
            leaf = self.store.switch_to_sibling(message_id)
        except StoreError:
            return
        self.conversationChanged.emit(leaf.conversation_id)
