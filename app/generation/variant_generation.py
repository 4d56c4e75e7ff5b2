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

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.generation.prompt_messages import ImageDetailFor, missing_image, no_detail, prompt_messages
from app.generation.reply_generation import DEFAULT_PARAMS
from app.generation.reply_provenance import reply_provenance
from app.generation.sibling_replies import Sibling, SiblingReplies, SiblingRun
from app.generation.token_coalescer import TokenCoalescer
from app.generation.worker import EngineLike, InferenceWorker
from app.generation.worker_events import ModelLoaded
from app.generation.worker_generation import (
    fit_options,
    plain_stats,
    sampling_json,
    sampling_params,
)
from app.generation.worker_requests import GenerationRequest
from app.store.conversations import Store

MIN_VARIANTS, MAX_VARIANTS = 2, 4


@dataclass(frozen=True)
class VariantsStarted:
    """A Regenerate ×N run began: its replies' message ids and seeds, in column order."""

    conversation_id: int
    message_ids: tuple[int, ...]
    seeds: tuple[int, ...]


class VariantGeneration(SiblingReplies):
    started = Signal(VariantsStarted)

    def __init__(
        self,
        store: Store,
        worker: InferenceWorker,
        model_info: Callable[[], ModelLoaded | None] = lambda: None,
        parent: QObject | None = None,
        detail_for: ImageDetailFor = no_detail,
    ) -> None:
        """`model_info`: the worker's info on its model, whose `identity` each version's
        provenance records; `detail_for(model_id)`: the image detail the versions' model is
        given."""
        super().__init__(store, worker.relay, parent)
        self.worker = worker
        self._model_info = model_info
        self._detail_for = detail_for

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
            variants.append(Sibling(reply.id, self.store.reply_writer(reply.id)))
        path = self.store.active_path(conversation_id)[:-1]  # up to the message answered
        messages = prompt_messages(self.store, conversation_id, path, self._detail_for(model_id))
        run = self._begin(conversation_id, variants)
        info = self._model_info()
        identity = info.identity if info is not None else None
        coalescers = [
            TokenCoalescer(self.worker.relay.wrap(lambda text, i=i: self._on_text(run, i, text)))
            for i in range(n)
        ]

        def decode(engine: EngineLike | None) -> list[dict[str, Any]]:
            if engine is None:
                raise RuntimeError("No model is loaded yet.")
            results = engine.generate_variants(
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
                {
                    "text": r.text,
                    "finish_reason": r.finish_reason,
                    "stats": plain_stats(r.stats),
                    "provenance": _provenance(identity, engine, messages, params, seed, r),
                }
                for seed, r in zip(seeds, results, strict=True)
            ]

        refused = missing_image(self.store, path)
        if refused is None:
            self.worker.call(
                decode,
                on_done=lambda results: self._on_done(run, results),
                on_error=lambda message: self._on_error(run, message),
            )
        ids = self.message_ids()
        self.started.emit(VariantsStarted(conversation_id, tuple(ids), tuple(seeds)))
        if refused is not None:
            self._on_error(run, refused)  # as the engine's own refusal of the prompt ends
        return ids

    def _on_done(self, run: SiblingRun, results: list[dict[str, Any]]) -> None:
        for index, (variant, result) in enumerate(zip(run.siblings, results, strict=True)):
            missing = result["text"][len(variant.writer.text) :]
            if missing and result["text"].startswith(variant.writer.text):
                self._on_text(run, index, missing)
            status = "stopped" if result["finish_reason"] == "cancelled" else "complete"
            stats = {**result["stats"], "finish_reason": result["finish_reason"]}
            self._finish(run, index, status, stats, provenance=result["provenance"])

    def _on_error(self, run: SiblingRun, message: str) -> None:
        self.notice.emit(message)
        self._fail_rest(run, message)


def _provenance(
    identity: dict[str, Any] | None,
    engine: EngineLike,
    messages: list[dict],
    params: dict[str, Any],
    seed: int,
    result: Any,
) -> dict[str, Any] | None:
    """A version's provenance (on the worker thread): its own seed, decoded in the batch
    without speculation and without template switches, as `decode` asks."""
    if identity is None:
        return None
    own = {**params, "seed": seed, "speculation": "off"}
    request = GenerationRequest(-1, messages, own)
    return reply_provenance(
        identity,
        request,
        own,
        sampling_json(sampling_params(own), own),
        False,
        engine.context_length,
        list(result.token_ids),
    )
