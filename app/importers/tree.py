"""A conversation read from another app, as a tree in neutral terms, before it meets the store.

Every reader produces these; the writer turns them into store rows. Ids are the source's own
(strings), so a second import of the same file finds what is already there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.images.data_urls import is_data_url, parse_data_url
from app.images.store import ImageError

# "tool": a tool's result, and "summary": a compacted branch's summary, which only Branchwise's
# own exports hold.
ImportedRole = Literal["user", "assistant", "tool", "summary"]


@dataclass(frozen=True, slots=True)
class ImportedAttachment:
    """A file the source message carried: its text when the export has it, else only its name."""

    name: str
    text: str | None = None
    data: bytes | None = None  # the bytes of an image or file found in the archive
    mime_type: str | None = None
    tokens: int = 0  # what the source counted it as (Branchwise's own exports only)

    @property
    def missing(self) -> bool:
        """True when the export names the file but does not hold its contents."""
        return self.text is None and self.data is None


def inline_attachment(name: str, url: str) -> ImportedAttachment:
    """A file a message names by URL: with its bytes when the URL is a base64 `data:` URL (the
    export holds them), else by name only, marked missing (nothing is fetched)."""
    if not is_data_url(url):
        return ImportedAttachment(name)
    try:
        mime, data = parse_data_url(url, strict=False)
    except ImageError:
        return ImportedAttachment(name)
    return ImportedAttachment(name, data=data, mime_type=mime)


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One user, assistant or tool message; `parent_id` is the source id of its parent (None: a
    root)."""

    source_id: str
    parent_id: str | None
    role: ImportedRole
    content: str
    created_at: float | None = None  # UTC seconds since the epoch
    model: str | None = None  # the source's model label (e.g. "gpt-4o"): shown, never loaded
    reasoning: str = ""
    attachments: tuple[ImportedAttachment, ...] = ()
    trace: str = ""  # tool code and output of the source's turn: shown folded, never sent
    status: Literal["complete", "stopped", "error", "interrupted"] = "complete"
    error: str | None = None
    # Branchwise's own exports only: the reply's sampling settings and its statistics.
    params: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    # Branchwise's own exports: the reply's provenance as recorded (app.store.provenance).
    # None: another app's reply, which the writer marks as imported with the model it named.
    provenance: dict[str, Any] | None = None
    # Branchwise's own exports: a reply's tool calls ({"id", "name", "arguments"} each, as
    # `app.importers.tool_use` checked them) and a tool result's call id and tool name. Other
    # apps' tool use is the trace above: their calls name tools this app does not have.
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    # Branchwise's own exports: a summary's or a kept turn's record
    # (`app.store.compaction_records`), its message ids given as the file's source ids.
    compaction: dict[str, Any] = field(default_factory=dict)
    # Branchwise's own exports: the knowledge excerpts retrieved for a user message, as the
    # store keeps them (app.knowledge.excerpts), kept after its files so the turn renders as it
    # did.
    excerpts: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class ImportedConversation:
    """A whole conversation; `messages` lists every parent before its children, siblings in the
    source's order. `active_leaf_id` is the source's current branch (None: the newest leaf)."""

    source_format: str
    source_id: str
    title: str
    messages: list[ImportedMessage]
    created_at: float | None = None
    updated_at: float | None = None
    system_prompt: str = ""
    active_leaf_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    where: str = ""  # its place in the input, for the report ("conversations.json, entry 3")
    # Branchwise's own exports only: the local model and settings to continue with, and the
    # list marks. Other apps' models are labels on their messages, never a model to load.
    model_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    pinned: bool = False
    archived: bool = False
