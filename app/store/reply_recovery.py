"""Replies the database would not take at close, kept in a file beside it until the next start.

When a reply's final write still fails as the store closes (a full disk, a locked file), its
whole text, reasoning, tool calls and provenance go to `<database stem>-unsaved-replies.json`
in the data folder, written to a temporary file and renamed over, so a crash mid-write leaves
either the old file or the new one.
The next `Store.open` puts each reply back: into its own row if that still exists, else as a new
reply under the message it answered. Applying is idempotent (a reply already back is recognised
by its text and time), and a reply with nowhere to go stays in the file and is reported.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.kept_files import replace_atomically, set_aside
from app.store.records import (
    FINAL_STATUSES,
    InvalidInputError,
    check_status,
    check_text,
    dump_mapping,
    dump_tool_calls,
)


@dataclass(frozen=True)
class UnsavedReply:
    """One reply as the recovery file holds it. Not `MessageFields`: only what a reply's writer
    holds, under the names this file has kept since its version 1, which must still load."""

    message_id: int
    conversation_id: int
    parent_id: int
    content: str
    created_at: float
    status: str
    model_id: str | None
    params: dict[str, Any]
    stats: dict[str, Any]
    error: str | None
    # Absent from files written before they were kept (version 1 without them still loads).
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    provenance: dict[str, Any] = field(default_factory=dict[str, Any])  # app.store.provenance


def recovery_path(database: Path) -> Path:
    return database.with_name(f"{database.stem}-unsaved-replies.json")


def save(path: Path, replies: list[UnsavedReply]) -> None:
    """Write `replies` to `path`, merged with those already there (the newer text of the same
    message wins). Raises OSError when even this file cannot be written."""
    merged = {r.message_id: r for r in _read_existing(path)}
    merged.update({r.message_id: r for r in replies})
    write(path, list(merged.values()))


def write(path: Path, replies: list[UnsavedReply]) -> None:
    """Replace the file with exactly `replies` (atomically); remove it when there are none."""
    if not replies:
        path.unlink(missing_ok=True)
        return
    data = json.dumps(
        {"version": 1, "replies": [asdict(r) for r in replies]}, ensure_ascii=False, indent=1
    )
    replace_atomically(path, data)


def load(path: Path) -> list[UnsavedReply]:
    """The replies in the file (none if it does not exist). Raises InvalidInputError for a file
    that cannot be read or is not what `save` writes; it is then left as it is."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"The unsaved replies in {path} could not be read: {exc}.") from exc
    try:
        replies = [UnsavedReply(**item) for item in raw["replies"]]
        for reply in replies:
            check_text(reply.content, "An unsaved reply", allow_empty=True)
            check_text(reply.reasoning, "An unsaved reply's reasoning", allow_empty=True)
            dump_tool_calls(reply.tool_calls, "An unsaved reply's tool calls")
            dump_mapping(reply.provenance, "An unsaved reply's provenance")
            check_status(reply.status, FINAL_STATUSES)
    except (KeyError, TypeError, InvalidInputError) as exc:
        raise InvalidInputError(f"The unsaved replies in {path} are malformed: {exc}.") from exc
    return replies


def _read_existing(path: Path) -> list[UnsavedReply]:
    try:
        return load(path)
    except InvalidInputError:
        # Never overwrite what could not be read: it may hold text. Set it aside instead.
        set_aside(path)
        return []
