"""Plain, immutable data the widgets show; the window fills them from the store.

The widgets depend on these rather than on the store's classes, so they can be built and tested
without a database or a model, and the store can change shape without touching the widgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Literal

Role = Literal["system", "user", "assistant", "tool"]
Status = Literal["complete", "streaming", "stopped", "error", "interrupted"]

_NO_STATS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True)
class AttachmentView:
    """A file attached to a message: its name, size in bytes, tokens and extracted text;
    `missing` for an imported file the export named but did not hold."""

    name: str
    size: int
    tokens: int
    text: str
    missing: bool = False


@dataclass(frozen=True)
class ToolCallView:
    """A call a reply made: its id, the tool's model-facing name and the arguments as JSON."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class MessageView:
    """One message on the active path, with its place among its siblings (1-based index)."""

    id: str
    role: Role
    content: str
    status: Status = "complete"
    sibling_index: int = 1
    sibling_count: int = 1
    # Keys as the store records them: prompt_tokens, cached_tokens, prefill_tokens,
    # generated_tokens, ttft_s, prefill_tps, decode_tps, disk_tokens, finish_reason (a str),
    # dropped_message_ids (a list). Missing keys are simply not shown.
    stats: Mapping[str, float] = field(default=_NO_STATS)
    error: str | None = None
    # Left out of the model's view by the chat's overflow policy for the latest reply on the
    # path (the conversation outgrew the model's context).
    left_out: bool = False
    # A reply's reasoning, shown folded above its answer; `thinking` while it is still being
    # written (the stats then hold no reasoning_s / reasoning_tokens yet).
    reasoning: str = ""
    thinking: bool = False
    attachments: tuple[AttachmentView, ...] = ()
    # An imported turn's tool code and output (shown folded, never sent to a model), and the
    # model label of an imported reply (e.g. "gpt-4o"), shown where a local reply's stats go.
    trace: str = ""
    model_label: str = ""
    # A reply's tool calls; for a `tool` message, the tool's name (its stats hold "server",
    # "tool", "duration_s", "chars", "cut", "failure", "edited").
    tool_calls: tuple[ToolCallView, ...] = ()
    tool_name: str | None = None


@dataclass(frozen=True)
class ConversationRow:
    id: str
    title: str
    pinned: bool = False
    updated_at: datetime = field(default_factory=datetime.now)


@dataclass(frozen=True)
class SearchHit:
    """A conversation that matched a search, at its best match; `snippet` is plain text around
    that match, `spans` the same text as (text, is_match) pieces, `matches` how many of the
    conversation's messages (and its title) matched."""

    conversation_id: str
    message_id: str
    title: str
    snippet: str
    spans: tuple[tuple[str, bool], ...] = ()
    matches: int = 1
