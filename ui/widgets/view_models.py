"""Plain, immutable data the widgets show; the window fills them from the store.

The widgets depend on these rather than on the store's classes, so they can be built and tested
without a database or a model, and the store can change shape without touching the widgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool", "summary"]
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

    @classmethod
    def from_record(cls, item: Mapping[str, Any]) -> AttachmentView:
        """A file's entry as the store keeps it; an imported one may carry more keys (its mime
        type, its saved file), which the chips do not show."""
        return cls(
            name=str(item.get("name", "file")),
            size=int(item.get("size", 0)),
            tokens=int(item.get("tokens", 0)),
            text=str(item.get("text", "")),
            missing=bool(item.get("missing", False)),
        )


@dataclass(frozen=True)
class ImageView:
    """An image attached to a message or a draft: the name it came with, its size in bytes and
    in pixels (as shown, after its EXIF orientation), its format, the tokens it costs the model
    (0: not counted, e.g. for a model that cannot see it) and where its file is kept; `path` is
    None when the file is gone from the data folder."""

    name: str
    size: int
    width: int
    height: int
    format: str
    tokens: int
    sha256: str
    path: str | None


@dataclass(frozen=True)
class ToolCallView:
    """A call a reply made: its id, the tool's own name and its server's ("" when no tool of
    the chat has the name the model called, which `name` then is), the arguments as JSON."""

    id: str
    name: str
    arguments: str
    server: str = ""


@dataclass(frozen=True)
class SummaryView:
    """What a compacted branch's summary stands for: how many earlier messages it covers
    (from `first` to `last`, their first words), the tokens they took (None: not counted), the
    messages kept word for word below it, and whether the person edited it."""

    covered: int
    stands_for: int | None
    kept: int
    first: str
    last: str
    edited: bool = False


@dataclass(frozen=True)
class SourceView:
    """A knowledge excerpt a reply's turn read: `number` as the model read it ([1], [2]…), where
    it came from, its text, and `state`: "current", "changed" (the file changed since), "gone"
    (no longer in the index) or "unknown" (no index to compare with). `start` and `end` are its
    span in the document's extracted text, `document_sha256` that text's digest when it was read:
    where the index finds it again, to show it in its page."""

    number: int
    collection: str
    path: str
    page: int | None
    heading: str
    text: str
    state: str = "current"
    start: int = 0
    end: int = 0
    document_sha256: str = ""


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
    images: tuple[ImageView, ...] = ()
    # An imported turn's tool code and output (shown folded, never sent to a model), and the
    # model label of an imported reply (e.g. "gpt-4o"), shown where a local reply's stats go.
    trace: str = ""
    model_label: str = ""
    # The model that wrote a reply whose versions several models wrote (a compare), as the
    # person reads it ("Model B" while a blind compare is undecided); "" otherwise.
    model_name: str = ""
    # A reply's tool calls; for a `tool` message, the tool's name (its stats hold "server",
    # "tool", "duration_s", "chars", "cut", "failure", "edited").
    tool_calls: tuple[ToolCallView, ...] = ()
    tool_name: str | None = None
    # A compacted branch's summary (role "summary"), and a turn it keeps word for word (a copy
    # of one of the full chat's messages); `compacted`: a message of a compacted branch.
    summary: SummaryView | None = None
    kept_copy: bool = False
    compacted: bool = False
    # A reply whose turn read knowledge: the sources it may cite, shown under it.
    sources: tuple[SourceView, ...] = ()


@dataclass(frozen=True)
class ConversationRow:
    id: str
    title: str
    pinned: bool = False
    updated_at: datetime = field(default_factory=datetime.now)
    project_id: str = ""  # the project it belongs to ("": none)


@dataclass(frozen=True)
class ProjectRow:
    """A project's group in the sidebar: its name, whether it is folded, how many chats."""

    id: str
    name: str
    collapsed: bool = False
    chats: int = 0


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
