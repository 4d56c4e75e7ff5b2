"""Requests built from messages or raw prompts: validated, fitted to the context and rendered to
token ids with the model's chat template, with the reply's room worked out.

Worker thread only, like the engine that owns it (the tokenizer may be MLX-backed).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from inference.decoding.sampling import SamplingParams
from inference.engine.raw_prompt import check_room, prompt_ids
from inference.engine.request import Request
from inference.engine.tool_reply import offered_tools, opens_thinking
from inference.errors import PromptError, SamplingError
from inference.prompt.chat_prompt import (
    RenderedPrompt,
    generation_suffix,
    render_ids,
    render_prompt,
    validate_messages,
)
from inference.prompt.context_fit import Overflow, chat_context, fit_messages, reply_room
from inference.prompt.tool_messages import for_template
from inference.vision.prompt import (
    VisionPrompt,
    as_parts,
    expand,
    image_sources,
    split_images,
    text_only,
)

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel


class RequestBuilder:
    """Turns what a caller asks for into a `Request` for one loaded model."""

    def __init__(self, loaded: LoadedModel) -> None:
        self._loaded = loaded
        # What the chat template appends for the generation prompt, per set of template switches
        # (thinking off may add an empty reasoning block): it places the last user turn's
        # checkpoint without rendering the conversation again.
        self._suffixes: dict[tuple[tuple[str, str], ...], str | None] = {}

    @property
    def context_length(self) -> int | None:
        return self._loaded.context_length

    def count_prompt_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """Tokens the rendered prompt for `messages` takes, generation prompt included."""
        return len(self.prompt_ids(messages, template_kwargs, tools))

    def prompt_ids(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[int]:
        """The rendered prompt for `messages` (checked, with the `tools` offered), generation
        prompt included, without fitting it to the context."""
        clean, switches, _ = self._with_tools(messages, template_kwargs, tools)
        return self.render(clean, switches)

    def prompt_key(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[int]:
        """What the branch cache keeps `prompt_ids`' prompt under: the same ids, except that
        each image's tokens are ids derived from its digest (two images of one size share
        nothing past their start)."""
        clean, switches, _ = self._with_tools(messages, template_kwargs, tools)
        vision = self._rendered_images(clean, switches, continue_reply=False)
        return vision.key if vision is not None else self.render(clean, switches)

    def chat_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None,
        conversation_id: Hashable,
        overflow: Overflow,
        template_kwargs: Mapping[str, Any] | None = None,
        continue_reply: bool = False,
        context_limit: int | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Request:
        """A request for the reply after `messages`, fitted to the context (the chat's
        `context_limit` when smaller than the model's) and rendered (with `continue_reply`, the
        last message is a partial reply the model goes on writing). `tools` (OpenAI-style
        schemas) go to the template with its switches, so every render of the request sees
        them, and the reply is read for calls."""
        started = time.perf_counter()
        params = SamplingParams() if params is None else params
        self._check_token_ids(params)
        context = chat_context(self.context_length, context_limit)
        whose = (
            "this model's context"
            if context == self.context_length
            else ("this chat's context length")
        )
        clean, template_kwargs, tool_format = self._with_tools(messages, template_kwargs, tools)
        if continue_reply and clean[-1]["role"] != "assistant":
            raise PromptError("Only a reply can be continued: the last message is not one.")
        kept, dropped = self._fit(
            clean, params, overflow, template_kwargs, continue_reply, context, whose
        )
        prompt = render_prompt(self._loaded.tokenizer, kept, template_kwargs, continue_reply)
        # `prompt` stays as rendered (its text and spans place the message boundaries, which
        # the images' runs then shift); `ids` is what the model reads.
        vision = self._with_images(prompt, kept)
        ids = vision.ids if vision is not None else prompt.ids
        max_tokens, capped = reply_limit(context, len(ids), params.max_tokens)
        return Request(
            ids=ids,
            params=params,
            max_tokens=max_tokens,
            capped_by_context=capped,
            conversation_id=conversation_id,
            started=started,
            prompt=prompt,
            messages=kept,
            template_kwargs=dict(template_kwargs or {}),
            dropped=tuple(dropped),
            tool_format=tool_format,
            tools=list(template_kwargs.get("tools") or []),
            starts_thinking=tool_format is not None
            and opens_thinking(self._loaded.tokenizer, prompt),
            vision=vision,
        )

    def raw_request(
        self,
        prompt: str | Sequence[int],
        params: SamplingParams | None,
        conversation_id: Hashable,
    ) -> Request:
        """A request that continues a raw prompt (text tokenized without the chat template, or
        token ids): no messages, so no turns to leave out."""
        started = time.perf_counter()
        params = SamplingParams() if params is None else params
        self._check_token_ids(params)
        ids = prompt_ids(self._loaded.tokenizer, prompt, self._vocab_size)
        check_room(ids, self.context_length)
        max_tokens, capped = reply_limit(self.context_length, len(ids), params.max_tokens)
        return Request(ids, params, max_tokens, capped, conversation_id, started)

    def render(
        self,
        messages: list[dict[str, Any]],
        template_kwargs: Mapping[str, Any] | None,
        continue_reply: bool = False,
    ) -> list[int]:
        """The prompt's ids, each image's tokens included."""
        vision = self._rendered_images(messages, template_kwargs, continue_reply)
        if vision is not None:
            return vision.ids
        return render_ids(
            self._loaded.tokenizer,
            messages,
            not continue_reply,
            continue_final=continue_reply,
            **(template_kwargs or {}),
        )

    def _rendered_images(
        self,
        messages: list[dict[str, Any]],
        template_kwargs: Mapping[str, Any] | None,
        continue_reply: bool,
    ) -> VisionPrompt | None:
        """`messages` rendered with their images in (None: no images, or a text-only model)."""
        if self._loaded.vision is None or not image_sources(messages):
            return None
        prompt = render_prompt(self._loaded.tokenizer, messages, template_kwargs, continue_reply)
        return self._with_images(prompt, messages)

    def _with_images(
        self, prompt: RenderedPrompt, messages: list[dict[str, Any]]
    ) -> VisionPrompt | None:
        """The rendered prompt with the images of `messages` in (None: no images)."""
        sources = image_sources(messages)
        vision = self._loaded.vision
        if not sources or vision is None:
            return None
        images = [vision.processing.prepare(source, source.detail) for source in sources]
        return expand(
            prompt,
            self._loaded.tokenizer,
            vision.family.placeholder,
            vision.image_token_id,
            images,
            vision.atomic_images,
        )

    def _with_tools(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
        """The checked messages in the form the template renders, the template's switches with
        the tools among them, and the model's tool-call format (None: no tools offered)."""
        tokenizer = self._loaded.tokenizer
        opened = split_images(messages)
        if self._loaded.vision is None:
            if image_sources(opened):
                raise PromptError(self._no_vision_message())
            opened = text_only(opened)
        clean = for_template(validate_messages(opened), tokenizer.chat_template)
        if self._loaded.vision is not None:
            clean = as_parts(clean)
        schemas, tool_format = offered_tools(tokenizer, tools)
        switches = dict(template_kwargs or {})
        if schemas:
            switches["tools"] = schemas
        return clean, switches, tool_format

    def _no_vision_message(self) -> str:
        loaded = self._loaded
        why = f" {loaded.text_only_reason}" if loaded.text_only_reason else ""
        return f"{loaded.model_id} cannot see images: it is a text-only model.{why}"

    def generation_suffix(self, template_kwargs: Mapping[str, Any]) -> str | None:
        key = tuple(sorted((k, repr(v)) for k, v in template_kwargs.items()))
        if key not in self._suffixes:
            self._suffixes[key] = generation_suffix(self._loaded.tokenizer, template_kwargs)
        return self._suffixes[key]

    def _check_token_ids(self, params: SamplingParams) -> None:
        # mlx ignores an out-of-range index in the bias scatter, so a typo would pass unnoticed.
        if params.logit_bias and max(params.logit_bias) >= self._vocab_size:
            raise SamplingError(
                f"logit_bias names token {max(params.logit_bias)}, but this model's "
                f"vocabulary has only {self._vocab_size} tokens (ids 0 to {self._vocab_size - 1})."
            )

    @cached_property
    def _vocab_size(self) -> int:
        """Token ids the tokenizer knows (added tokens included); built once, on first use."""
        return len(self._loaded.tokenizer.get_vocab())

    def _fit(
        self,
        messages: list[dict[str, Any]],
        params: SamplingParams,
        overflow: Overflow,
        template_kwargs: Mapping[str, Any] | None,
        continue_reply: bool,
        limit: int | None,
        whose: str,
    ) -> tuple[list[dict[str, Any]], list[int]]:
        """The messages that fit `limit` tokens with room for a reply, and those left out."""
        if limit is None:
            return messages, []
        room = reply_room(limit, params.max_tokens)

        def count(kept: list[dict[str, Any]]) -> int:
            return len(self.render(kept, template_kwargs, continue_reply))

        return fit_messages(messages, count, limit, room, overflow, whose)


def reply_limit(limit: int | None, prompt_tokens: int, max_tokens: int) -> tuple[int, bool]:
    """How many tokens the reply may take within a context of `limit` tokens, and whether the
    context (not max_tokens) is what limits it."""
    if limit is None or limit - prompt_tokens >= max_tokens:
        return max_tokens, False
    return limit - prompt_tokens, True
