"""LM Studio's conversation files: `~/.lmstudio/conversations/[folder/]<ms>.conversation.json`,
`{name, createdAt (ms), systemPrompt, perChatPredictionConfig, messages[{versions[],
currentlySelected}]}`.

Each turn holds its versions (regenerations, edits): they become siblings under the selected
version of the turn before, and only the selected one continues. A user version is
`{role, content[{type: "text"|"file"}]}` (a file's bytes, where the imported folder or zip holds
LM Studio's `user-files/<identifier>` beside the conversations, come with it; else it is listed
by name); an assistant version is `{role, steps[]}` whose
`contentBlock` steps hold the text (`style.type == "thinking"`: reasoning), tool calls and the
model (`genInfo.indexedModelIdentifier`).
"""

from __future__ import annotations

import json
import mimetypes
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.chatgpt import MAX_ASSET_BYTES
from app.importers.entries import Convert
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member, Source
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage

FORMAT = "lmstudio"
_SYSTEM_KEY = "llm.prediction.systemPrompt"
_FILES_DIR = "user-files"


def matches(data: dict[str, Any]) -> bool:
    messages = data.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("versions"), list) for m in messages
    )


def converter(member: Member) -> Convert:
    files = _UserFiles(member.source)

    def convert(raw: Any, where: str) -> ImportedConversation:
        return _convert(raw, where, member.name.removesuffix(".json"), files)

    return convert


class _UserFiles:
    """The attached files the source holds, found by identifier under a `user-files/` folder
    (LM Studio keeps them there, beside `conversations/`)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._by_id: dict[str, Member] | None = None

    def find(self, identifier: str, name: str) -> ImportedAttachment:
        if self._by_id is None:
            self._by_id = {
                m.basename: m
                for m in self._source.members
                if f"/{m.name}".endswith(f"/{_FILES_DIR}/{m.basename}")
            }
        member = self._by_id.get(identifier)
        if member is None or member.size > MAX_ASSET_BYTES:
            return ImportedAttachment(name)
        return ImportedAttachment(
            name, data=member.read(MAX_ASSET_BYTES), mime_type=mimetypes.guess_type(identifier)[0]
        )


def _convert(raw: Any, where: str, file_id: str, files: _UserFiles) -> ImportedConversation:
    data = v.obj(raw, where)
    if not matches(data):
        raise ImportRefusedError(f"{where} is not an LM Studio conversation.")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    stamp = data.get("createdAt")
    created = fallbacks.time(stamp, f"{where}.createdAt")
    # The file is named by its creation time too, so without one the file's name stands in.
    readable = isinstance(stamp, int | str) and not isinstance(stamp, bool)
    source_id = (v.ident(stamp, f"{where}.createdAt") if readable else None) or file_id
    system = fallbacks.text(data.get("systemPrompt"), f"{where}.systemPrompt")
    config = fallbacks.obj(data.get("perChatPredictionConfig"), f"{where}.perChatPredictionConfig")
    for index, item in enumerate(fallbacks.arr(config.get("fields"), f"{where}.fields")):
        field = fallbacks.obj(item, f"{where}.perChatPredictionConfig.fields[{index}]")
        if field.get("key") == _SYSTEM_KEY and isinstance(field.get("value"), str):
            system = v.clean(field["value"])
    slots = []
    for index, item in enumerate(data["messages"]):
        at = f"{where}.messages[{index}]"
        try:
            slot = _turn(v.obj(item, at), at, fallbacks, files)
        except ImportRefusedError as exc:  # one unreadable turn, not the conversation
            fallbacks.message_left_out(f"Turn {index + 1}", exc)
            continue
        if slot is not None:
            slots.append(slot)
    messages, leaf = forest.versions(slots)
    conversation = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(data.get("name"), f"{where}.name"),
        messages,
        created_at=created,
        system_prompt=system,
        warnings=warnings,
    )
    return forest.finish(conversation, leaf)


def _turn(
    turn: dict[str, Any], at: str, fallbacks: v.Fallbacks, files: _UserFiles
) -> tuple[list[ImportedMessage], int] | None:
    """A turn's versions and the selected one's place among them; None when none is a user or
    assistant message."""
    versions = [
        _version(v.obj(x, f"{at}.versions[{i}]"), f"{at}.versions[{i}]", fallbacks, files)
        for i, x in enumerate(v.arr(turn.get("versions"), f"{at}.versions"))
    ]
    kept = [m for m in versions if m is not None]
    if not kept:
        return None
    selected = fallbacks.index(turn.get("currentlySelected"), f"{at}.currentlySelected")
    return kept, sum(1 for m in versions[:selected] if m is not None)


def _version(
    version: dict[str, Any], at: str, fallbacks: v.Fallbacks, files: _UserFiles
) -> ImportedMessage | None:
    role = v.text(version.get("role"), f"{at}.role")
    if role == "user":
        texts, attached = [], []
        for index, item in enumerate(v.arr(version.get("content"), f"{at}.content")):
            part = v.obj(item, f"{at}.content[{index}]")
            if part.get("type") == "text":
                texts.append(v.text(part.get("text"), f"{at}.content[{index}].text"))
            elif part.get("type") == "file":
                identifier = v.text(part.get("identifier") or part.get("fileIdentifier"), at)
                name = v.text(part.get("name"), at) or identifier or "file"
                attached.append(files.find(identifier, name))
        return ImportedMessage("", None, "user", "".join(texts), attachments=tuple(attached))
    if role != "assistant":
        return None
    text, reasoning, trace, model = [], [], [], None
    for index, item in enumerate(v.arr(version.get("steps"), f"{at}.steps")):
        step = v.obj(item, f"{at}.steps[{index}]")
        if step.get("type") != "contentBlock":
            continue
        style = v.opt_obj(step.get("style"), f"{at}.steps[{index}].style")
        info = fallbacks.obj(step.get("genInfo"), f"{at}.steps[{index}].genInfo")
        model = (
            fallbacks.opt_text(
                info.get("indexedModelIdentifier"),
                f"{at}.steps[{index}].genInfo.indexedModelIdentifier",
            )
            or model
        )
        for position, piece in enumerate(v.arr(step.get("content"), f"{at}.steps[{index}]")):
            block = v.obj(piece, f"{at}.steps[{index}].content[{position}]")
            if block.get("type") == "text":
                words = v.text(block.get("text"), f"{at}.steps[{index}].content[{position}]")
                (reasoning if style.get("type") == "thinking" else text).append(words)
            elif block.get("type") in ("toolCallRequest", "toolCallResult"):
                trace.append(v.clean(json.dumps(block, ensure_ascii=False)))
    return ImportedMessage(
        "",
        None,
        "assistant",
        "".join(text),
        model=model,
        reasoning="".join(reasoning).strip(),
        trace="\n\n".join(trace),
    )
