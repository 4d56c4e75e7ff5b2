"""Token figures of compaction: how many earlier tokens a summary stands for (counted on the
worker with the model's own template), and whether a chat has reached the share of its context
at which *Summarise older turns* acts.

A summary stands for the tokens its covered messages took in the prompt: the prompt of the
covered path less that of what stays (the system prompt). When the path began with an earlier
summary, that summary's tokens are replaced by what it stood for, so the figure is always the
original chat's, however many times it was summarised.

A chat is due when the last reply on its branch, with the prompt it read, takes at least the
threshold's share of the chat's context: the engine's own count of what the model last held,
known without counting again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.store.compaction_records import is_summary, stands_for
from app.store.records import Message

if TYPE_CHECKING:
    from app.generation.worker import EngineLike

# Renders and counts a list of chat messages (the engine's, with the chat's template switches).
Count = Callable[[list[dict[str, Any]]], int]


@dataclass(frozen=True)
class SummarisedPrompt:
    """What counting a summary's tokens needs, read from the store on the GUI thread: the
    covered path's messages as the model reads them, those of what stays (the system prompt,
    and an earlier summary the path began with), and what that earlier summary stood for."""

    covered: list[dict[str, Any]]
    base: list[dict[str, Any]]
    carried: int

    def tokens(self, count: Count) -> int:
        """On the worker: the earlier tokens the summary stands for."""
        base = count(self.base) if self.base else 0
        return count(self.covered) - base + self.carried


def summarised_prompt(
    covered: Sequence[Message], prompt: Callable[[list[Message]], list[dict]]
) -> SummarisedPrompt:
    """`prompt(path)` is a path's messages as the model reads them (with the system prompt)."""
    base = list(covered[:1]) if covered and is_summary(covered[0]) else []
    carried = (stands_for(base[0]) or 0) if base else 0
    return SummarisedPrompt(prompt(list(covered)), prompt(base), carried)


def counter(engine: EngineLike, template_kwargs: dict[str, Any]) -> Count:
    """The engine's count of a prompt, on the worker thread."""
    return lambda messages: engine.count_prompt_tokens(messages, template_kwargs)


@dataclass(frozen=True)
class ContextUse:
    """The tokens the last reply of a branch and its prompt took, of the chat's context."""

    used: int
    context: int

    @property
    def share(self) -> float:
        return self.used / self.context


def context_use(path: Sequence[Message], context: int | None) -> ContextUse | None:
    """What the branch `path` takes of `context` by its last reply's stats (None: no context
    known, or no reply written here on it since it was compacted)."""
    if not context:
        return None
    for message in reversed(path):
        stats = message.stats
        if message.role == "assistant" and "prompt_tokens" in stats:
            used = int(stats["prompt_tokens"]) + int(stats.get("generated_tokens", 0))
            return ContextUse(used, context)
        if is_summary(message):
            return None
    return None


def is_due(use: ContextUse | None, threshold: float) -> bool:
    return use is not None and use.share >= threshold
