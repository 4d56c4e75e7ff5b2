"""Regenerate ×N: several replies to one message, written side by side as sibling messages.

`start` begins N empty assistant replies under the same parent (siblings, so `‹k/n›` steps
through them afterwards), each with its own seed in its params, and asks the worker to decode
them together (`Engine.generate_variants`: one prefill, one batch). Tokens stream into each
reply's own message; each variant has its own Stop, and `stop()` stops them all. Whatever
happens — a stop, closing the window, switching away — what was generated is kept, and a reply
that did not end by itself is marked "stopped". `keep(index)` makes one variant the active branch.

The work runs through `InferenceWorker.call`, so it waits its turn behind other requests; token
updates come back to the GUI thread through the worker's relay, coalesced per variant.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal

from app.generation.prompt_messages import ImageDetailFor, missing_image, no_detail, prompt_messages
from app.generation.reply_generation import DEFAULT_PARAMS
from app.generation.reply_provenance import reply_provenance
from app.generation.token_coalescer import TokenCoalescer
from app.generation.worker import EngineLike, InferenceWorker
from app.generation.worker_generation import (
    fit_options,
    plain_stats,
    sampling_json,
    sampling_params,
)
from app.generation.worker_requests import GenerationRequest
from app.store.conversations import Store, StoreError
from app.store.reply_writer import ReplyWriter

MIN_VARIANTS, MAX_VARIANTS = 2, 4


@dataclass
class _Variant:
    message_id: int
    seed: int
    writer: ReplyWriter
    cancel: threading.Event = field(default_factory=threading.Event)
    done: bool = False


@dataclass
class _Run:
    run_id: int
    conversation_id: int
    variants: list[_Variant]


class VariantGeneration(QObject):
    # {"conversation_id", "message_ids": [...], "seeds": [...]}
    started = Signal(object)
    # {"index", "message_id", "text"} (the variant's whole text so far)
    variantUpdated = Signal(object)
    # {"index", "message_id", "status", "stats"}
    variantFinished = Signal(object)
    busyChanged = Signal(bool)
    ended = Signal(int)  # the conversation whose variants are all finished
    notice = Signal(str)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        model_info: Callable[[], dict[str, Any] | None] = lambda: None,
        parent: QObject | None = None,
        detail_for: ImageDetailFor = no_detail,
    ) -> None:
        """`model_info`: the worker's info on its model, whose "identity" each version's
        provenance records; `detail_for(model_id)`: the image detail the versions' model is
        given."""
        super().__init__(parent)
        self.store = store
        self.worker = worker
        self._model_info = model_info
        self._detail_for = detail_for
        self._ids = itertools.count(1)
        self._run: _Run | None = None
        self._last: _Run | None = None  # the run finished last, for `keep` afterwards
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(1000)
        self._flush_timer.timeout.connect(self._flush)

    def is_busy(self) -> bool:
        return self._run is not None

    def conversation_id(self) -> int | None:
        """The conversation of the run in progress."""
        return None if self._run is None else self._run.conversation_id

    def message_ids(self) -> list[int]:
        return [] if self._run is None else [v.message_id for v in self._run.variants]

    def start(
        self, conversation_id: int, parent_id: int, model_id: str | None, n: int
    ) -> list[int]:
        """Begin `n` sibling replies to `parent_id` and ask the worker for them; returns their
        message ids. Raises StoreError when they could not be begun (nothing is asked then)."""
        if not MIN_VARIANTS <= n <= MAX_VARIANTS:
            raise ValueError(f"Regenerate makes {MIN_VARIANTS} to {MAX_VARIANTS} versions.")
        conversation = self.store.get_conversation(conversation_id)
        params = {**DEFAULT_PARAMS, **conversation.params}
        base = params.get("seed")
        base = random.randrange(2**31) if base is None else int(base)
        seeds = [base + i for i in range(n)]
        variants = []
        for seed in seeds:
            reply = self.store.begin_reply(
                conversation_id, parent_id, model_id, {**params, "seed": seed}
            )
            variants.append(_Variant(reply.id, seed, self.store.reply_writer(reply.id)))
        path = self.store.active_path(conversation_id)[:-1]  # up to the message answered
        messages = prompt_messages(self.store, conversation_id, path, self._detail_for(model_id))
        run = _Run(next(self._ids), conversation_id, variants)
        self._run = run
        identity = (self._model_info() or {}).get("identity")
        coalescers = [
            TokenCoalescer(self.worker.relay.wrap(lambda text, i=i: self._on_text(run, i, text)))
            for i in range(n)
        ]

        def decode(engine: EngineLike | None) -> list[dict[str, Any]]:
            if engine is None:
                raise RuntimeError("No model is loaded yet.")
            results = engine.generate_variants(  # type: ignore[attr-defined]
                messages,
                sampling_params(params),
                seeds=seeds,
                conversation_id=conversation_id,
                on_token=lambda i, text: coalescers[i].add(text),
                cancel=[v.cancel for v in variants],
                **fit_options(params),
            )
            for coalescer in coalescers:
                coalescer.flush()
            return [
                {"text": r.text, "finish_reason": r.finish_reason, "stats": plain_stats(r.stats),
                 "provenance": _provenance(identity, engine, messages, params, seed, r)}
                for seed, r in zip(seeds, results, strict=True)
            ]

        refused = missing_image(self.store, path)
        if refused is None:
            self.worker.call(
                decode,
                on_done=lambda results: self._on_done(run, results),
                on_error=lambda message: self._on_error(run, message),
            )
        self._flush_timer.start()
        self.busyChanged.emit(True)
        ids = self.message_ids()
        self.started.emit({"conversation_id": conversation_id, "message_ids": ids, "seeds": seeds})
        if refused is not None:
            self._on_error(run, refused)  # as the engine's own refusal of the prompt ends
        return ids

    def stop(self, index: int | None = None) -> None:
        """Stop one variant (or all): its text so far is kept, marked as stopped."""
        if self._run is None:
            return
        for i, variant in enumerate(self._run.variants):
            if index in (None, i):
                variant.cancel.set()

    def keep(self, index: int) -> int | None:
        """Make variant `index` (of the run in progress or the last one) the active branch."""
        run = self._run or self._last
        if run is None:
            return None
        message_id = run.variants[index].message_id
        try:
            self.store.switch_to_sibling(message_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return None
        self.ended.emit(run.conversation_id)
        return message_id

    def save_after_shutdown(self) -> None:
        """Once the worker has stopped: deliver its last results still queued for the GUI thread
        (the event loop will not run again), then keep each unfinished variant's text, marked
        stopped."""
        QCoreApplication.sendPostedEvents(self.worker.relay, QEvent.Type.MetaCall)
        run = self._run
        if run is not None:
            for variant in run.variants:
                if not variant.done:
                    self._finish(variant, "stopped", None)
        self._end()

    def _on_text(self, run: _Run, index: int, text: str) -> None:
        variant = run.variants[index]
        if variant.done:
            return
        try:
            variant.writer.append(text)
        except StoreError as exc:
            self.notice.emit(f"A version could not be saved: {exc}")
            return
        self.variantUpdated.emit(
            {"index": index, "message_id": variant.message_id, "text": variant.writer.text}
        )

    def _on_done(self, run: _Run, results: list[dict[str, Any]]) -> None:
        for index, (variant, result) in enumerate(zip(run.variants, results, strict=True)):
            missing = result["text"][len(variant.writer.text) :]
            if missing and result["text"].startswith(variant.writer.text):
                self._on_text(run, index, missing)
            status = "stopped" if result["finish_reason"] == "cancelled" else "complete"
            stats = {**result["stats"], "finish_reason": result["finish_reason"]}
            self._finish(variant, status, stats, provenance=result["provenance"])
            self.variantFinished.emit(
                {"index": index, "message_id": variant.message_id, "status": status,
                 "stats": stats}
            )
        self._end()

    def _on_error(self, run: _Run, message: str) -> None:
        for variant in run.variants:
            if not variant.done:
                self._finish(variant, "error", None, error=message)
        self.notice.emit(message)
        self._end()

    def _finish(self, variant: _Variant, status: str, stats: dict | None, **kw: Any) -> None:
        variant.done = True
        try:
            variant.writer.finish(status, stats=stats, **kw)
        except StoreError as exc:
            self.notice.emit(f"A version could not be saved: {exc}")

    def _flush(self) -> None:
        if self._run is None:
            return
        for variant in self._run.variants:
            if not variant.done:
                # A refused write stays in the writer; the finish writes it.
                with contextlib.suppress(StoreError):
                    variant.writer.flush()

    def _end(self) -> None:
        run = self._run
        if run is None:
            return
        self._last, self._run = run, None
        self._flush_timer.stop()
        self.busyChanged.emit(False)
        self.ended.emit(run.conversation_id)


def _provenance(
    identity: dict[str, Any] | None, engine: EngineLike, messages: list[dict],
    params: dict[str, Any], seed: int, result: Any,
) -> dict[str, Any] | None:
    """A version's provenance (on the worker thread): its own seed, decoded in the batch
    without speculation and without template switches, as `decode` asks."""
    if identity is None:
        return None
    own = {**params, "seed": seed, "speculation": "off"}
    request = GenerationRequest(-1, messages, own)
    return reply_provenance(identity, request, own, sampling_json(sampling_params(own), own),
                            False, engine.context_length, list(result.token_ids))
