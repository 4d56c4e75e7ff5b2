"""Running one request: its prompt prefilled from the branch cache in paced chunks (with
checkpoints at message boundaries for caches that cannot rewind), then decoded with mlx-lm's
`stream_generate` or speculatively, and the stack given back to the branch cache.

Worker thread only: MLX arrays and streams belong to the thread that made them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import mlx.core as mx
from mlx_lm.generate import generation_stream, stream_generate

from inference.decoding.draft_length import DraftLength, PassTimes
from inference.decoding.sampling import LogitsProcessor, Sampler
from inference.decoding.speculative import Drafter, PromptLookupDrafter, SpeculativeDecoder
from inference.engine.decoded_reply import DecodedReply
from inference.engine.image_inputs import ImageInputs
from inference.engine.prefill_pacer import PrefillPacer
from inference.engine.result import GenerationResult
from inference.prompt.chat_prompt import message_boundaries

if TYPE_CHECKING:
    from inference.cache.branch_cache import BranchCache
    from inference.cache.stack import CacheStack
    from inference.decoding.draft_model import DraftCaches
    from inference.engine.request import Request
    from inference.engine.request_builder import RequestBuilder
    from inference.loading.load import LoadedModel
    from inference.vision.features import FeatureCache


class _Cancelled(Exception):
    """Raised between prefill chunks when the request's cancel event is set."""


class RequestRunner:
    """Prefills and decodes requests on one model's branch cache."""

    def __init__(
        self,
        loaded: LoadedModel,
        cache: BranchCache,
        builder: RequestBuilder,
        prefill_chunk_tokens: int,
        features: FeatureCache | None = None,
    ) -> None:
        self.loaded = loaded
        self.cache = cache
        self._builder = builder
        self.pacer = PrefillPacer(prefill_chunk_tokens)
        # What a verification pass costs here, learnt across replies (a property of the machine).
        self.lookup_times = PassTimes()
        self.draft: DraftCaches | None = None
        self.images = ImageInputs(loaded, features)

    def run(self, request: Request) -> GenerationResult:
        """Prefill the request's prompt from the branch cache, decode, and store the stack."""
        stack = self.prefilled(request)
        if isinstance(stack, GenerationResult):
            return stack
        try:
            result = self.decode(stack, request)
        except BaseException:
            self.cache.discard(stack)
            raise
        self.cache.give_back(stack, request.conversation_id)
        return result

    def prefilled(self, request: Request) -> CacheStack | GenerationResult:
        """A stack from the branch cache holding every prompt token but the last; or, when the
        request is cancelled during prefill, its result (the stack goes back as far as it got,
        so a retry resumes there)."""
        taken = self.cache.take(request.key, request.conversation_id, request.whole_spans)
        request.cached, request.disk_tokens = taken.cached, taken.disk_tokens
        stack = taken.stack
        try:
            self.images.begin(request)
            self._prefill(stack, request)
        except _Cancelled:
            self.cache.give_back(stack, request.conversation_id)
            return request.cancelled(len(stack.tokens) - request.cached)
        except BaseException:
            self.cache.discard(stack)
            raise
        return stack

    def decode(self, stack: CacheStack, request: Request) -> GenerationResult:
        """Decode with mlx-lm's stream_generate, feeding it the one prompt token left."""
        params = request.params
        if params.seed is not None:
            # Seeded right before decoding, exactly where a from-scratch run seeds before
            # stream_generate: prefill draws no random numbers, so both draw the same sequence.
            mx.random.seed(params.seed)
        sampler = params.make_sampler()
        processors = params.make_logits_processors(request.ids[:-1])
        speculative = self._speculative_decoder(stack, request, sampler, processors)
        responses = (
            iter(speculative)
            if speculative is not None
            else stream_generate(
                self.loaded.model,
                self.loaded.tokenizer,
                request.ids[-1:],
                max_tokens=request.max_tokens,
                sampler=sampler,
                logits_processors=processors,
                prompt_cache=stack.caches,
            )
        )
        reply = DecodedReply(request, stack)
        try:
            for response in responses:
                now = time.perf_counter()
                if reply.add(response.token, response.text, response.finish_reason, now):
                    break
        finally:
            # Closed here, on the thread that runs it (never from another thread).
            responses.close()
        reply.end()
        return reply.result(speculative)

    def _prefill(self, stack: CacheStack, request: Request) -> None:
        """Feed `ids[len(stack.tokens):-1]` in chunks; the last token goes to the decoder.

        Chunks end on message boundaries when the stack cannot rewind, and a checkpoint is
        stored at each, so later branches resume there. A chunk that would end inside an image
        whose tokens attend both ways runs on to the image's end (a cancel acts between chunks,
        so no stack ever stops inside one).
        """
        ids, key = request.ids, request.key
        start, end = len(stack.tokens), len(ids) - 1
        checkpoints: set[int] = set()
        # A raw prompt has no message boundaries: its one checkpoint is its end, stored when
        # the stack goes back to the branch cache.
        if not self.cache.rewinds_anywhere and end > start and request.prompt is not None:
            vision = request.vision
            boundaries = message_boundaries(
                self.loaded.tokenizer,
                request.messages,
                request.prompt,
                start if vision is None else 0,  # in the rendered ids, before images go in
                self._builder.generation_suffix(request.template_kwargs),
                request.template_kwargs,
            )
            if vision is not None:
                # Each image's start too: the same text with another picture resumes there.
                moved = (vision.expanded(b, request.prompt) for b in boundaries)
                boundaries = [b for b in moved if b is not None]
                boundaries += [span.start for span in vision.spans]
            checkpoints = {b for b in boundaries if start < b <= end}
        whole = request.whole_spans
        request.on_progress(0, request.prefill_tokens)
        position = start
        while position < end:
            if request.cancel.is_set():
                raise _Cancelled
            size = self.pacer.next_chunk()
            stop = min([position + size, end, *(b for b in checkpoints if b > position)])
            stop = next((b for a, b in whole if a < stop < b), stop)
            chunk_started = time.perf_counter()
            with mx.stream(generation_stream):
                self.loaded.model(
                    mx.array(ids[position:stop])[None],
                    cache=stack.caches,
                    **self.images.chunk(request, position, stop),
                )
                stack.evaluate()
            self.pacer.record(stop - position, time.perf_counter() - chunk_started)
            stack.tokens.extend(key[position:stop])
            position = stop
            mx.clear_cache()
            request.on_progress(position - start, request.prefill_tokens)
            if position in checkpoints:
                self.cache.checkpoint(stack, request.conversation_id)
        if request.cancel.is_set():
            raise _Cancelled

    def _speculative_decoder(
        self,
        stack: CacheStack,
        request: Request,
        sampler: Sampler,
        processors: list[LogitsProcessor],
    ) -> SpeculativeDecoder | None:
        """A decoder that drafts ahead, or None to decode plainly: when asked to, or when a
        layer cannot be trimmed back (recurrent state, sliding windows: drafts there could not
        be taken back, so this engine declines rather than checkpointing every step), or when
        drafting has been measured not to pay on this machine."""
        if request.params.speculation == "off" or not self.cache.rewinds_anywhere:
            return None
        draft = self.draft if request.params.speculation == "draft" else None
        times = draft.times if draft is not None else self.lookup_times
        if not times.may_pay():
            return None
        drafter: Drafter = (
            draft.drafter(request.ids, request.conversation_id, self.pacer.next_chunk())
            if draft is not None
            else PromptLookupDrafter(request.ids)
        )
        return SpeculativeDecoder(
            self.loaded.model,
            self.loaded.tokenizer,
            stack.caches,
            request.ids,
            request.max_tokens,
            sampler,
            processors,
            drafter,
            DraftLength(times),
        )
