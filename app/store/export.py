"""Conversation export and import formats; no SQL here.

JSON (`FORMAT`, version `EXPORT_VERSION`) holds the whole tree losslessly:

    {"format": "branchwise-conversation", "version": 7, "exported_at": 1700000000.0,
     "conversation": {"title", "created_at", "updated_at", "system_prompt", "model_id",
                      "params", "pinned", "archived", "active_leaf_id"},
     "messages": [{"id", "parent_id", "role", "content", "created_at", "status", "model_id",
                   "params", "stats", "error", "visit", "reasoning", "attachments",
                   "trace", "tool_calls", "tool_call_id", "tool_name", "provenance",
                   "compaction"}, ...],
     "images": {sha256: base64 of the bytes, ...}}

Version 2 added a reply's `reasoning` and a message's `attachments` ({"name", "size",
"tokens", "text"} each); a version-1 file reads with neither. An imported turn's `trace` (tool
code and output) is optional in version 2. Version 3 added tool use: the `tool` role, a reply's
`tool_calls` ({"id", "name", "arguments"} each) and a tool message's `tool_call_id` and
`tool_name`; older files read without them. Version 4 added images: image records among the
attachments ({"kind": "image", "name", "size", "sha256", "width", "height", "format",
"tokens"}) and their bytes in `"images"` (`app.store.export_images`); an image whose bytes the
file lacks keeps its record. Version 5 added a reply's `provenance` (app.store.provenance):
restored as it was, so a replay after an import compares with the original reply's tokens.
Version 6 added compacted branches: the `summary` role and each message's `compaction`
(`app.store.compaction_records`: a summary with the ids of the messages it covers and keeps, a
kept turn with the id it copies), ids of the file that an import maps to its new ones.
Version 7 added the knowledge excerpts retrieved for a user message, among its attachments
({"kind": "knowledge", ...}: `app.knowledge.excerpts.Excerpt.as_record`), so the turn renders
after an import exactly as it did. In Markdown a reply's calls and each tool result
are folded blocks. Markdown holds the active path,
for reading: a compacted branch's summary as a section of its own, saying what it stands for,
a reply's reasoning as a folded, quoted block ahead of its answer, each
attached file and each knowledge excerpt as a folded block of its text, and each image as a
line naming it.

Messages come parents first. Ids are those of the exporting database and only link the
records; an import gets new ones. `visit` orders the leaves by when they were last visited, so
switching branches after an import lands where it did before.
"""

from __future__ import annotations

import html
import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeGuard, cast

from app.images.store import is_image_record
from app.knowledge.excerpts import Excerpt, is_excerpt_record
from app.sizes import format_size
from app.store.compaction_records import check_compaction, covered_ids, stands_for
from app.store.export_images import images_from_json
from app.store.records import (
    Conversation,
    InvalidInputError,
    Message,
    MessageFields,
    check_optional_text,
    check_role,
    check_status,
    check_text,
    dump_attachments,
    dump_mapping,
    dump_tool_calls,
)

FORMAT = "branchwise-conversation"
EXPORT_VERSION = 7
_STATUS_NOTES = {
    "streaming": "still being written",
    "stopped": "stopped",
    "error": "failed",
    "interrupted": "interrupted",
}


@dataclass(frozen=True, slots=True)
class MessageRecord(MessageFields):
    """One validated message of an import; `id` and `parent_id` are the file's own ids."""

    id: int
    parent_id: int | None
    visit: int


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    title: str
    created_at: float
    updated_at: float
    system_prompt: str
    model_id: str | None
    params: dict[str, Any]
    pinned: bool
    archived: bool
    active_leaf_id: int | None
    messages: tuple[MessageRecord, ...]
    # digest: bytes, each checked
    images: dict[str, bytes] = field(default_factory=dict[str, bytes])


def to_json(
    conversation: Conversation, messages: list[Message], visits: Mapping[int, int]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": time.time(),
        "conversation": {
            "title": conversation.title,
            "created_at": conversation.created_at,
            "updated_at": conversation.updated_at,
            "system_prompt": conversation.system_prompt,
            "model_id": conversation.model_id,
            "params": conversation.params,
            "pinned": conversation.pinned,
            "archived": conversation.archived,
            "active_leaf_id": conversation.active_leaf_id,
        },
        "messages": [
            {"id": m.id, "parent_id": m.parent_id, **_fields(m), "visit": visits[m.id]}
            for m in messages
        ],
    }


_FIELD_NAMES = tuple(f.name for f in fields(MessageFields))  # read once: an archive has thousands


def _fields(message: Message) -> dict[str, Any]:
    """A message's fields as the file holds them: its tuples (attachments, calls) as lists."""
    values: dict[str, Any] = {name: getattr(message, name) for name in _FIELD_NAMES}
    for name in ("attachments", "tool_calls"):
        values[name] = list(values[name])
    return values


def from_json(data: object) -> ConversationRecord:
    """Validate an export completely before anything is written; refuse with the place and
    reason of the first problem."""
    data = _mapping(data, "The file")
    if data.get("format") != FORMAT:
        raise InvalidInputError(
            "This is not a Branchwise conversation export (no matching format)."
        )
    version = data.get("version")
    if not _is_int(version) or version < 1:
        raise InvalidInputError(f"The export has an invalid version {version!r}.")
    if version > EXPORT_VERSION:
        raise InvalidInputError(
            f"The export was made by a newer Branchwise (format version {version}; this version "
            f"reads up to {EXPORT_VERSION})."
        )
    conv = _mapping(data.get("conversation"), '"conversation"')
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        raise InvalidInputError('"messages" must be a list.')
    messages: list[MessageRecord] = []
    seen: set[int] = set()
    for index, raw in enumerate(cast("list[object]", raw_messages)):
        record = _message(raw, f"messages[{index}]", seen)
        seen.add(record.id)
        messages.append(record)
    active = conv.get("active_leaf_id")
    if active is not None and (not _is_int(active) or active not in seen):
        raise InvalidInputError(f"conversation.active_leaf_id {active!r} names no message.")
    return ConversationRecord(
        title=check_text(conv.get("title"), "conversation.title", allow_empty=False),
        created_at=_time(conv.get("created_at"), "conversation.created_at"),
        updated_at=_time(conv.get("updated_at"), "conversation.updated_at"),
        system_prompt=check_text(
            conv.get("system_prompt", ""), "conversation.system_prompt", allow_empty=True
        ),
        model_id=check_optional_text(conv.get("model_id"), "conversation.model_id"),
        params=_json_mapping(conv.get("params"), "conversation.params"),
        pinned=_flag(conv.get("pinned", False), "conversation.pinned"),
        archived=_flag(conv.get("archived", False), "conversation.archived"),
        active_leaf_id=active,
        messages=tuple(messages),
        images=images_from_json(data.get("images")),
    )


def to_markdown(
    conversation: Conversation,
    path: list[Message],
    model_names: Mapping[str, str] | None = None,
) -> str:
    """The branch `path` as Markdown: the title, when the chat started and last changed, the
    system prompt, then each message (a reply headed by its model's readable name, from
    `model_names` where it has one)."""
    title = " ".join(conversation.title.split())
    names = model_names or {}
    started, changed = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(t))
        for t in (conversation.created_at, conversation.updated_at)
    )
    lines = [f"# {title}", "", f"*Started {started}, last changed {changed}.*", ""]
    if conversation.system_prompt.strip():
        quoted = [f"> {line}".rstrip() for line in conversation.system_prompt.splitlines()]
        lines += ["**System prompt**", "", *quoted, ""]
    for message in path:
        if message.role == "tool":
            lines += _tool_result(message)
            continue
        if message.role == "summary":
            lines += _summary(message)
            continue
        heading = "User" if message.role == "user" else "Assistant"
        if message.role == "assistant" and message.model_id:
            heading += f" ({names.get(message.model_id, message.model_id)})"
        lines += [f"## {heading}", ""]
        excerpts = [a for a in message.attachments if is_excerpt_record(a)]
        for number, record in enumerate(excerpts, start=1):
            lines += _folded(_excerpt_summary(number, record), _fenced(record["text"]))
        for attachment in message.attachments:
            if is_excerpt_record(attachment):
                continue
            if is_image_record(attachment):
                size = f"{attachment['width']}×{attachment['height']}"
                lines += [
                    f"*Image: {attachment['name']} ({size}, {format_size(attachment['size'])})*",
                    "",
                ]
                continue
            lines += _folded(
                f"Attached: {attachment['name']} ({format_size(attachment['size'])})",
                _fenced(attachment["text"]),
            )
        if message.reasoning:
            lines += _folded(
                "Thinking", [f"> {line}".rstrip() for line in message.reasoning.splitlines()]
            )
        if message.content:
            lines += [message.content, ""]
        for call in message.tool_calls:
            arguments = json.dumps(call["arguments"], ensure_ascii=False, indent=2)
            lines += _folded(f"Tool call: {call['name']}", _fenced(arguments))
        if message.status in _STATUS_NOTES:
            lines += [f"*({_STATUS_NOTES[message.status]})*", ""]
        if message.error:
            lines += [f"*Error: {message.error}*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _excerpt_summary(number: int, record: dict[str, Any]) -> str:
    excerpt = Excerpt.from_record(record)
    page = "" if excerpt.page is None else f", page {excerpt.page}"
    return f"Source [{number}]: {excerpt.path}{page} ({excerpt.collection})"


def _folded(summary: str, body: list[str]) -> list[str]:
    """A block Markdown viewers show closed until clicked (HTML <details>, which CommonMark
    passes through); the blank lines let the Markdown inside it render."""
    return [
        "<details>",
        f"<summary>{html.escape(summary)}</summary>",
        "",
        *body,
        "",
        "</details>",
        "",
    ]


def _summary(message: Message) -> list[str]:
    """A compacted branch's summary: what it stands for, then its text, as the model read it."""
    count = len(covered_ids(message))
    tokens = stands_for(message)
    about = f", about {tokens:,} tokens" if tokens else ""
    edited = "; edited by hand" if message.compaction.get("edited") else ""
    note = (
        f"*This branch goes on from a summary of {count} earlier messages{about}{edited}; "
        "the full conversation is kept beside it.*"
    )
    status = [f"*({_STATUS_NOTES[message.status]})*", ""] if message.status in _STATUS_NOTES else []
    return ["## Summary of the earlier conversation", "", note, "", message.content, "", *status]


def _tool_result(message: Message) -> list[str]:
    what = "failed" if message.status == "error" else "result"
    return _folded(f"Tool {what}: {message.tool_name or 'tool'}", _fenced(message.content))


def _fenced(text: str) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *text.splitlines(), fence]


def _message(raw: object, where: str, seen: set[int]) -> MessageRecord:
    item = _mapping(raw, where)
    message_id = item.get("id")
    if not _is_int(message_id):
        raise InvalidInputError(f"{where}.id must be a whole number, not {message_id!r}.")
    if message_id in seen:
        raise InvalidInputError(f"{where}.id {message_id} appears twice.")
    parent_id = item.get("parent_id")
    if parent_id is not None and (not _is_int(parent_id) or parent_id not in seen):
        raise InvalidInputError(
            f"{where}.parent_id {parent_id!r} names no earlier message (parents come first)."
        )
    visit = item.get("visit", 0)
    if not _is_int(visit) or visit < 0:
        raise InvalidInputError(f"{where}.visit must be a whole number >= 0, not {visit!r}.")
    try:
        role = check_role(item.get("role"))
        status = check_status(item.get("status"))
        dump_tool_calls(item.get("tool_calls"), "tool_calls")
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from exc
    return MessageRecord(
        message_id,
        parent_id,
        visit,
        role=role,
        content=check_text(item.get("content"), f"{where}.content", allow_empty=True),
        created_at=_time(item.get("created_at"), f"{where}.created_at"),
        # Nothing streams into an imported reply any more.
        status="interrupted" if status == "streaming" else status,
        model_id=check_optional_text(item.get("model_id"), f"{where}.model_id"),
        params=_json_mapping(item.get("params"), f"{where}.params"),
        stats=_json_mapping(item.get("stats"), f"{where}.stats"),
        error=check_optional_text(item.get("error"), f"{where}.error"),
        reasoning=check_text(item.get("reasoning", ""), f"{where}.reasoning", allow_empty=True),
        attachments=_attachments(item.get("attachments"), f"{where}.attachments"),
        trace=check_text(item.get("trace", ""), f"{where}.trace", allow_empty=True),
        tool_calls=_dicts(item.get("tool_calls")),
        tool_call_id=check_optional_text(item.get("tool_call_id"), f"{where}.tool_call_id"),
        tool_name=check_optional_text(item.get("tool_name"), f"{where}.tool_name"),
        provenance=_json_mapping(item.get("provenance"), f"{where}.provenance"),
        compaction=check_compaction(item.get("compaction"), f"{where}.compaction"),
    )


def _attachments(value: object, where: str) -> tuple[dict[str, Any], ...]:
    dump_attachments(value, where)  # refuses anything but nothing or well-formed entries
    return _dicts(value)


def _dicts(value: object) -> tuple[dict[str, Any], ...]:
    """Copies of a checked list of JSON objects (nothing: none)."""
    if not isinstance(value, list):
        return ()
    return tuple(dict(cast("dict[str, Any]", item)) for item in cast("list[object]", value))


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where} must be a JSON object, not {type(value).__name__}.")
    return cast("Mapping[str, Any]", value)  # JSON: the keys are text


def _json_mapping(value: object, where: str) -> dict[str, Any]:
    dump_mapping(value, where)  # refuses anything but nothing or a JSON-safe dict
    return dict(cast("dict[str, Any]", value)) if isinstance(value, dict) else {}


def _time(value: object, where: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise InvalidInputError(f"{where} must be a time in seconds, not {value!r}.")
    return float(value)


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{where} must be true or false, not {value!r}.")
    return value


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
