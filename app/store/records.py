"""Values the conversation store hands out, the errors it raises, and the checks on what it is
given. No SQL here: `app.store.connection` turns rows into these."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from app.knowledge.excerpts import Excerpt, is_excerpt_record
from app.store.message_checks import MessageFieldError, as_dict, check_choice

# "summary": a summary of an earlier path, the first message of a compacted branch
# (`app.store.compaction`).
Role = Literal["user", "assistant", "tool", "summary"]
Status = Literal["complete", "streaming", "stopped", "error", "interrupted"]
ROLES: frozenset[str] = frozenset(get_args(Role))
STATUSES: frozenset[str] = frozenset(get_args(Status))
FINAL_STATUSES: frozenset[str] = STATUSES - {"streaming"}

# Far above any real message or reply, low enough that SQLite's own limit (1e9 bytes) is never
# the one that answers, since its error would not tell the person what went wrong.
MAX_CONTENT_CHARS = 8 * 1024 * 1024


class StoreError(Exception):
    """Base class: the message is written for the person using the app."""


class NotFoundError(StoreError):
    """An id that names no conversation or message (or one deleted since)."""


class InvalidInputError(StoreError):
    """Input the store refuses: empty text, an unknown role or status, malformed import data."""


class NewerDatabaseError(StoreError):
    """The database was written by a newer Branchwise; it is left exactly as it was."""


@dataclass(frozen=True, slots=True)
class Conversation:
    id: int
    title: str
    created_at: float  # Unix seconds
    updated_at: float  # last time a message was added or finished
    system_prompt: str
    model_id: str | None
    params: dict[str, Any]
    active_leaf_id: int | None  # None only while the conversation has no messages
    pinned: bool
    archived: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageFields:
    """What a message says and how it came to be: all of it but where it sits. Declared once,
    for the store's messages (`Message`) and an import's (`app.store.export.MessageRecord`)."""

    role: Role
    content: str
    created_at: float
    status: Status
    model_id: str | None
    params: dict[str, Any]
    stats: dict[str, Any]
    error: str | None
    reasoning: str = ""  # a reply's thoughts before its answer, kept apart from `content`
    # Files attached to a user message: {"name", "size", "tokens", "text"} each; an
    # imported one may also say "missing" (not in the export), its "mime_type" and "file" (its
    # bytes, kept under the data folder's imported-files/). An image is {"kind": "image",
    # "name", "size", "sha256", "width", "height", "format", "tokens"} (app.images.store). A
    # knowledge excerpt retrieved for the message is {"kind": "knowledge", ...}
    # (app.knowledge.excerpts.Excerpt.as_record), in the order retrieved.
    attachments: tuple[dict[str, Any], ...] = ()
    trace: str = ""  # an imported turn's tool code and output: shown folded, never sent
    # An assistant reply's tool calls, {"id", "name", "arguments"} each (arguments: a dict).
    tool_calls: tuple[dict[str, Any], ...] = ()
    # A `tool` message: the call it answers and the tool's model-facing name; its stats hold
    # {"server", "tool", "duration_s", "chars", "cut", "failure"} (see app.chat.tools.flow).
    tool_call_id: str | None = None
    tool_name: str | None = None
    # A reply's provenance as `app.store.provenance` writes it ({} when not recorded).
    provenance: dict[str, Any] = field(default_factory=dict[str, Any])
    # A summary's record, or a kept turn's copy_of (`app.store.compaction`; {} for the rest).
    compaction: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class Message(MessageFields):
    """A stored message: `Message(id, conversation_id, parent_id, role=..., content=...)`."""

    id: int
    conversation_id: int
    parent_id: int | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    conversation_id: int
    message_id: int | None  # None when the conversation's title matched
    title: str
    # The excerpt as (text, is_match) pieces, so the UI escapes the text and styles the matches
    # itself; no markup travels inside the text.
    spans: tuple[tuple[str, bool], ...]
    rank: float  # FTS5 bm25: lower is a better match

    @property
    def snippet(self) -> str:
        return "".join(text for text, _ in self.spans)


def check_text(content: object, what: str, *, allow_empty: bool) -> str:
    """Refuse what cannot be stored exactly, with a message that says why."""
    if not isinstance(content, str):
        raise InvalidInputError(f"{what} must be text, not {type(content).__name__}.")
    if not allow_empty and not content.strip():
        raise InvalidInputError(f"{what} is empty; write something first.")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInputError(
            f"{what} is too long ({len(content):,} characters; the limit is {MAX_CONTENT_CHARS:,})."
        )
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Only a lone surrogate (from a broken decoder or clipboard) gets here: it is not a
        # character, and UTF-8 cannot hold it.
        raise InvalidInputError(
            f"{what} contains an invalid character (an unpaired surrogate) at position {exc.start}."
        ) from exc
    return content


def check_role(role: object) -> Role:
    try:
        return cast(Role, check_choice(role, ROLES, "role"))
    except MessageFieldError as exc:
        raise InvalidInputError(str(exc)) from None


def check_status(status: object, allowed: frozenset[str] = STATUSES) -> Status:
    try:
        return cast(Status, check_choice(status, allowed, "status"))
    except MessageFieldError as exc:
        raise InvalidInputError(str(exc)) from None


def check_optional_text(value: object, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text or nothing, not {type(value).__name__}.")
    return value


_ATTACHMENT_FIELDS = {"name": str, "size": int, "tokens": int, "text": str}
_OPTIONAL_ATTACHMENT_FIELDS = {"missing": bool, "mime_type": str, "file": str}
# An image names its bytes by digest (kept in the data folder's images/), never holds them.
_IMAGE_FIELDS = {
    "kind": str,
    "name": str,
    "size": int,
    "sha256": str,
    "width": int,
    "height": int,
    "format": str,
    "tokens": int,
}
_DIGEST = re.compile(r"[0-9a-f]{64}")


def dump_attachments(value: object, what: str = "The attached files") -> str:
    """JSON text for a message's attachments; refuses anything but a list of text files
    {"name", "size", "tokens", "text"} (and the optional fields of imported files), images
    {"kind": "image", "name", "size", "sha256", "width", "height", "format", "tokens"} and
    knowledge excerpts (`Excerpt.as_record`)."""
    if value is None:
        return "[]"
    if not isinstance(value, list | tuple):
        raise InvalidInputError(f"{what} must be a list, not {type(value).__name__}.")
    clean: list[dict[str, Any]] = []
    for index, entry in enumerate(cast("Sequence[object]", value), start=1):
        item = as_dict(entry)
        if item is not None and is_excerpt_record(item):
            clean.append(check_excerpt(item, f"{what}: entry {index}"))
            continue
        image = item is not None and item.get("kind") == "image"
        required = _IMAGE_FIELDS if image else _ATTACHMENT_FIELDS
        optional = {} if image else _OPTIONAL_ATTACHMENT_FIELDS
        if (
            item is None
            or not set(required) <= set(item)
            or not set(item) <= set(required) | set(optional)
        ):
            raise InvalidInputError(f"{what}: entry {index} must have exactly {sorted(required)}.")
        for key, kind in (*required.items(), *optional.items()):
            if key in item and (
                not isinstance(item[key], kind) or (isinstance(item[key], bool) != (kind is bool))
            ):
                raise InvalidInputError(f"{what}: entry {index} has an invalid {key!r}.")
        check_text(item["name"], f"{what}: entry {index}'s name", allow_empty=True)
        if image and not _DIGEST.fullmatch(item["sha256"]):
            raise InvalidInputError(f"{what}: {item['name']} has an invalid 'sha256'.")
        if not image:
            check_text(item["text"], f"{what}: {item['name']}", allow_empty=True)
        clean.append(dict(item))
    return json.dumps(clean, ensure_ascii=False, sort_keys=True)


def check_excerpt(item: dict[str, Any], what: str) -> dict[str, Any]:
    """A knowledge excerpt record as the store keeps it (its fields typed, nothing more), or
    InvalidInputError saying what is wrong."""
    try:
        excerpt = Excerpt.from_record(item)
    except ValueError as exc:
        raise InvalidInputError(f"{what}: {exc}.") from None
    if not set(item) <= set(excerpt.as_record()):
        raise InvalidInputError(f"{what} has fields a knowledge excerpt does not.")
    for name, text in (("text", excerpt.text), ("path", excerpt.path)):
        check_text(text, f"{what}'s {name}", allow_empty=name == "text")
    return excerpt.as_record()


def dump_tool_calls(value: object, what: str = "The tool calls") -> str:
    """JSON text for a reply's tool calls; refuses anything but a list of {"id", "name",
    "arguments"} entries with text ids and names, unique ids and JSON-object arguments."""
    if value is None:
        return "[]"
    if not isinstance(value, list | tuple):
        raise InvalidInputError(f"{what} must be a list, not {type(value).__name__}.")
    clean = [
        check_tool_call(entry, f"{what}: call {index}")
        for index, entry in enumerate(cast("Sequence[object]", value), start=1)
    ]
    if len({c["id"] for c in clean}) != len(clean):
        raise InvalidInputError(f"{what}: two calls have the same id.")
    return json.dumps(clean, ensure_ascii=False, sort_keys=True)


def check_tool_call(entry: object, what: str) -> dict[str, Any]:
    """One tool call as `dump_tool_calls` takes it, {"id", "name", "arguments"} (a copy);
    `what` names it ("The tool calls: call 2"). The chat history importer checks calls one at
    a time with it, so a bad one is left out instead of refusing the rest."""
    item = as_dict(entry)
    if item is None or set(item) != {"id", "name", "arguments"}:
        raise InvalidInputError(f"{what} must have exactly id, name, arguments.")
    for key in ("id", "name"):
        if not isinstance(item[key], str) or not item[key].strip():
            raise InvalidInputError(f"{what} has no {key}.")
        check_text(item[key], f"{what}'s {key}", allow_empty=False)
    dump_mapping(item["arguments"], f"{what}'s arguments")
    if not isinstance(item["arguments"], dict):
        raise InvalidInputError(f"{what}'s arguments must be a JSON object.")
    return {"id": item["id"], "name": item["name"], "arguments": item["arguments"]}


def dump_mapping(value: object, what: str) -> str:
    """JSON text for params and stats; refuses what would not load back the same."""
    if value is None:
        return "{}"
    if not isinstance(value, dict):
        raise InvalidInputError(f"{what} must be a mapping, not {type(value).__name__}.")
    if not value:  # most messages' params and stats: no need to encode and decode to check
        return "{}"
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} cannot be saved: {exc}.") from exc
    if json.loads(text) != value:
        # e.g. integer keys come back as strings, tuples as lists.
        raise InvalidInputError(f"{what} would not load back unchanged; use plain JSON values.")
    return text
