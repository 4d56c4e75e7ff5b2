"""A reply split into its reasoning and its answer while it streams.

Reasoning models write their thoughts first: inside `<think>…</think>` (Qwen3, DeepSeek-R1
distills, Magistral), or in a channel of their own (gpt-oss's harmony format:
`<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…`). The
markers are matched on decoded text with mlx-lm's `TextStateMachine`, which holds back text that
may be the start of a marker, so a tag split across streamed deltas is never shown half-way.

The markers come from mlx-lm's tokenizer where it knows them (`think_start`/`think_end`, or a
response format's own states and transitions), from the harmony special tokens when the vocabulary
has them, and otherwise from the chat template's source when it writes `<think>` as plain text.
A tokenizer with none of these gets no format, and its replies are all answer.

Some templates open the block in the generation prompt (the reply then starts inside it); the
rendered prompt says so, the same way mlx-lm's server decides it: a start marker after the last
end marker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mlx_lm.generate import TextStateMachine

from inference.prompt.template_switches import template_sources

if TYPE_CHECKING:
    from mlx_lm.tokenizer_utils import TokenizerWrapper

REASONING = "reasoning"
ANSWER = "normal"
# Channel headers between harmony messages: neither thought nor answer, never shown.
_HIDDEN = "header"
_TEXT_TAGS = ("<think>", "</think>")

HARMONY_TRANSITIONS: dict[str, list[tuple[str, str]]] = {
    _HIDDEN: [
        ("<|channel|>analysis<|message|>", REASONING),
        ("<|channel|>final<|message|>", ANSWER),
        ("<|channel|>commentary<|message|>", ANSWER),
    ],
    REASONING: [("<|end|>", _HIDDEN)],
    ANSWER: [("<|end|>", _HIDDEN)],
}
_HARMONY_TOKENS = ("<|channel|>", "<|message|>", "<|start|>", "<|end|>")

# Kimi K3's channels: the reasoning between think markers, the answer between response markers
# (markup, never shown), the message's close. Its tools section stays in the answer, where the
# tool-call reader finds it (inference.toolcalls.kimi_k3).
_K3_THINK = ("<|open|>think<|sep|>", "<|close|>think<|sep|>")
KIMI_K3_TRANSITIONS: dict[str, list[tuple[str, str]]] = {
    ANSWER: [
        (_K3_THINK[0], REASONING),
        ("<|open|>response<|sep|>", ANSWER),
        ("<|close|>response<|sep|>", ANSWER),
        ("<|close|>message<|sep|>", ANSWER),
    ],
    REASONING: [(_K3_THINK[1], ANSWER)],
}


@dataclass(frozen=True)
class ReasoningFormat:
    """How a model marks its reasoning. `start`/`end` are the block's markers when it has a
    block the prompt may open; `initial` the state a reply begins in otherwise."""

    transitions: Mapping[str, Sequence[tuple[str, str]]]
    initial: str = ANSWER
    start: str | None = None
    end: str | None = None

    @classmethod
    def of(cls, tokenizer: TokenizerWrapper) -> ReasoningFormat | None:
        """The format `tokenizer` uses, or None for a model that does not reason."""
        custom = getattr(tokenizer, "response_transitions", None)
        if custom:
            return cls(custom, tokenizer.response_initial_state or ANSWER)
        vocab = tokenizer.get_vocab()
        if all(token in vocab for token in _HARMONY_TOKENS):
            return cls(HARMONY_TRANSITIONS, _HIDDEN)
        sources = template_sources(tokenizer.chat_template)
        if any(all(tag in s for tag in _K3_THINK) for s in sources):
            return cls(KIMI_K3_TRANSITIONS, ANSWER, *_K3_THINK)
        if getattr(tokenizer, "has_thinking", False):
            start, end = tokenizer.think_start, tokenizer.think_end
            assert start is not None and end is not None, "mlx-lm finds both markers or neither"
            return cls.block(start, end)
        if any(all(tag in s for tag in _TEXT_TAGS) for s in sources):
            return cls.block(*_TEXT_TAGS)
        return None

    @classmethod
    def block(cls, start: str, end: str) -> ReasoningFormat:
        return cls({ANSWER: [(start, REASONING)], REASONING: [(end, ANSWER)]}, ANSWER, start, end)

    def opened_by(self, prompt: str) -> bool:
        """Whether `prompt` (the rendered prompt text) leaves a reasoning block open."""
        if self.start is None or self.end is None:
            return False
        return prompt.rfind(self.start) > prompt.rfind(self.end)


@dataclass
class ReplySplitter:
    """Feed decoded deltas in; get (reasoning, answer) deltas out, markers removed.

    Whitespace right after a marker (the newlines templates put around a block) is dropped, so
    neither part starts with blank lines; `finish()` also trims the reasoning's end. The
    reasoning's delta count (about one per token) and the time from its first delta to the
    first delta after it are kept for the stats line.
    """

    format: ReasoningFormat | None
    starts_inside: bool = False
    clock: Callable[[], float] = time.perf_counter
    reasoning: str = ""
    answer: str = ""
    reasoning_deltas: int = 0
    _state: Any = field(init=False, default=None)
    _trim: bool = field(init=False, default=False)
    _began: float | None = field(init=False, default=None)
    _ended: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.format is not None:
            machine = TextStateMachine({k: list(v) for k, v in self.format.transitions.items()})
            initial = REASONING if self.starts_inside else self.format.initial
            self._state = machine.make_state(initial)
            self._trim = True

    @property
    def thinking(self) -> bool:
        """Whether the reply is inside its reasoning now."""
        return self._state is not None and self._state[0] == REASONING

    @property
    def reasoning_s(self) -> float:
        """Seconds spent reasoning (so far, while it still does)."""
        if self._began is None:
            return 0.0
        return (self._ended if self._ended is not None else self.clock()) - self._began

    def feed(self, delta: str) -> tuple[str, str]:
        """The reasoning and answer text this delta adds (either may be empty)."""
        if self._state is None:
            self.answer += delta
            return "", delta
        was_thinking = self.thinking
        self._state, segments = TextStateMachine.split(self._state, delta)
        added = self._take(segments)
        self._account(was_thinking)
        return added

    def finish(self) -> tuple[str, str]:
        """Whatever text was held back as a possible marker; call once, after the last delta."""
        added = ("", "")
        if self._state is not None:
            was_thinking = self.thinking
            self._state, rest, state = TextStateMachine.flush(self._state)
            added = self._take([(state, rest)])
            self._account(was_thinking, counts=False)
            if self._began is not None and self._ended is None:
                self._ended = self.clock()
        self.reasoning = self.reasoning.rstrip()
        return added

    def _take(self, segments: list[tuple[str | None, str]]) -> tuple[str, str]:
        reasoning: list[str] = []
        answer: list[str] = []
        for index, (state, text) in enumerate(segments):
            if index > 0:
                self._trim = True  # a marker was crossed
            if self._trim:
                text = text.lstrip()
                self._trim = not text
            if state == REASONING:
                reasoning.append(text)
            elif state != _HIDDEN:
                answer.append(text)
        added = "".join(reasoning), "".join(answer)
        self.reasoning += added[0]
        self.answer += added[1]
        return added

    def _account(self, was_thinking: bool, counts: bool = True) -> None:
        now_thinking = self.thinking
        if counts and (was_thinking or now_thinking):
            self.reasoning_deltas += 1
        if now_thinking and self._began is None:
            self._began = self.clock()
        if was_thinking and not now_thinking and self._ended is None:
            self._ended = self.clock()


def reply_splitter(
    tokenizer: TokenizerWrapper | None,
    messages: list[dict[str, Any]],
    template_kwargs: Mapping[str, Any] | None = None,
) -> ReplySplitter:
    """A splitter for the reply to `messages`, starting inside the reasoning when the rendered
    prompt leaves a block open (rendered as text here; a template that fails to render fails the
    generation itself with a clear message, so it is left to do that)."""
    if tokenizer is None:
        return ReplySplitter(None)
    found = ReasoningFormat.of(tokenizer)
    if found is None or found.start is None:
        return ReplySplitter(found)
    try:
        prompt = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **(template_kwargs or {})
        )
    except Exception:  # Jinja and transformers raise many kinds; the engine reports it.
        return ReplySplitter(found)
    return ReplySplitter(found, starts_inside=found.opened_by(str(prompt)))
