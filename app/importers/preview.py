"""What an import of some files would bring, before anything is written: per input and format,
the conversations (with their source ids, for choosing), messages, branches, the date range,
attachments found and missing, and the problems found. Frozen dataclasses, built on the thread
that reads the files and shown by the window as they are.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from app.importers.entries import RefusedEntry
from app.importers.presets_projects import SettingsEntry
from app.importers.run import InputReading, read_entries
from app.importers.tree import ImportedConversation


@dataclass(frozen=True, slots=True)
class ConversationPreview:
    source_id: str
    title: str
    messages: int
    branches: int  # its leaves
    empty: bool  # no messages: it would be skipped


@dataclass(frozen=True, slots=True)
class FormatPreview:
    """One format's conversations in one input."""

    format: str  # the reader's key ("chatgpt", "claude"…)
    conversations: tuple[ConversationPreview, ...]
    messages: int
    branches: int
    attachments_found: int
    attachments_missing: tuple[str, ...]  # their names
    warnings: tuple[str, ...]
    first: str | None  # the earliest message's time (ISO 8601, UTC), if any has one
    last: str | None


@dataclass(frozen=True, slots=True)
class InputPreview:
    path: str
    formats: tuple[FormatPreview, ...]  # in the order they were found
    problems: tuple[str, ...]
    readable: bool


@dataclass(frozen=True, slots=True)
class Preview:
    inputs: tuple[InputPreview, ...]


@dataclass(slots=True)
class _Tally:
    """One format's numbers while its conversations are read."""

    conversations: list[ConversationPreview] = field(default_factory=list)
    messages: int = 0
    branches: int = 0
    attachments_found: int = 0
    attachments_missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    def add(self, conversation: ImportedConversation) -> None:
        parents: dict[str | None, int] = {}
        for message in conversation.messages:
            parents[message.parent_id] = parents.get(message.parent_id, 0) + 1
            for attachment in message.attachments:
                if attachment.missing:
                    self.attachments_missing.append(attachment.name)
                else:
                    self.attachments_found += 1
            if message.created_at is not None:
                self.times.append(message.created_at)
        leaves = sum(1 for m in conversation.messages if m.source_id not in parents)
        self.messages += len(conversation.messages)
        self.branches += leaves
        self.warnings += [f"{conversation.title}: {w}" for w in conversation.warnings]
        self.conversations.append(
            ConversationPreview(
                conversation.source_id,
                conversation.title,
                len(conversation.messages),
                leaves,
                not conversation.messages,
            )
        )

    def preview(self, key: str) -> FormatPreview:
        times = self.times
        return FormatPreview(
            key,
            tuple(self.conversations),
            self.messages,
            self.branches,
            self.attachments_found,
            tuple(self.attachments_missing),
            tuple(self.warnings),
            _iso(min(times)) if times else None,
            _iso(max(times)) if times else None,
        )


def preview(paths: Iterable[Path], cancel: threading.Event | None = None) -> Preview:
    """What importing `paths` would bring, writing nothing. `cancel` stops it between
    conversations (the person closed the preview)."""
    return Preview(tuple(_preview_input(path, cancel) for path in paths))


def _preview_input(path: Path, cancel: threading.Event | None) -> InputPreview:
    item = InputReading(path)
    tallies: dict[str, _Tally] = {}
    problems: list[str] = []
    for entry in read_entries(item):
        if cancel is not None and cancel.is_set():
            break
        if isinstance(entry, SettingsEntry):
            continue  # presets and projects: no conversations to preview
        if isinstance(entry, RefusedEntry):
            said = entry.reason.startswith(entry.where)
            problems.append(entry.reason if said else f"{entry.where}: {entry.reason}")
            continue
        tallies.setdefault(entry.source_format, _Tally()).add(entry)
    if item.error:
        problems.append(item.error)
    formats = tuple(tally.preview(key) for key, tally in tallies.items())
    return InputPreview(str(path), formats, tuple(problems), item.error is None)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
