"""text-generation-webui's chat histories: `user_data/logs/{chat/<character>,instruct}/
<YYYYMMDD-HH-MM-SS>.json`, `{internal[[user, bot]...], visible[...], metadata{"user_N" |
"assistant_N": {timestamp, versions[{content, timestamp}], current_version_index}}}`.

Versions before 2023's `internal`/`visible` wrote the same rows as `data` and `data_visible`
(no metadata). `internal` holds the raw text (`visible` is HTML-escaped). Each turn's versions
become siblings under the selected version of the turn before. A character chat's first row
`["<|BEGIN-VISIBLE-CHAT|>", greeting]` is the greeting alone. Times are local without a zone
(taken in this computer's zone, minute precision). Metadata that cannot be read (a time, a
versions list) falls back to the row's own text with a warning.
"""

from __future__ import annotations

from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.entries import Convert
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member
from app.importers.tree import ImportedConversation, ImportedMessage, ImportedRole

FORMAT = "textgen"
_GREETING = "<|BEGIN-VISIBLE-CHAT|>"
# Each history row: the user's text, then the reply.
_SIDES: tuple[tuple[int, ImportedRole], ...] = ((0, "user"), (1, "assistant"))
_TIME_SHAPES = ("%b %d, %Y %H:%M",)
# (raw rows, shown rows): today's names, then those of versions before mid-2023.
_ROW_KEYS = (("internal", "visible"), ("data", "data_visible"))


def matches(data: dict[str, Any]) -> bool:
    return _rows_key(data) is not None


def _rows_key(data: dict[str, Any]) -> str | None:
    for raw, shown in _ROW_KEYS:
        if isinstance(data.get(raw), list) and isinstance(data.get(shown), list):
            return raw
    return None


def converter(member: Member) -> Convert:
    def convert(raw: Any, where: str) -> ImportedConversation:
        return _convert(raw, where, member.name.removesuffix(".json"))

    return convert


def _convert(raw: Any, where: str, file_id: str) -> ImportedConversation:
    data = v.obj(raw, where)
    rows_key = _rows_key(data)
    if rows_key is None:
        raise ImportRefusedError(f"{where} is not a text-generation-webui history.")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    metadata = fallbacks.obj(data.get("metadata"), f"{where}.metadata")
    slots = []
    for row_index, item in enumerate(data[rows_key]):
        at = f"{where}.{rows_key}[{row_index}]"
        try:
            row = _row(item, at)
        except ImportRefusedError as exc:  # one unreadable turn, not the conversation
            fallbacks.message_left_out(f"Turn {row_index + 1}", exc)
            continue
        for side, role in _SIDES:
            text = row[side]
            if side == 0 and (text == _GREETING or not text):
                continue
            key = f"{role}_{row_index}"
            info = fallbacks.obj(metadata.get(key), f"{where}.metadata.{key}")
            slots.append(_slot(info, role, text, f"{where}.metadata.{key}", fallbacks))
    messages, leaf = forest.versions([s for s in slots if s[0]])
    conversation = ImportedConversation(FORMAT, file_id, "", messages, warnings=warnings)
    return forest.finish(conversation, leaf)


def _row(item: object, at: str) -> tuple[str, str]:
    row = v.arr(item, at)
    if len(row) != 2:
        raise ImportRefusedError(f"{at} must hold a user text and a reply.")
    return v.text(row[0], f"{at}[0]"), v.text(row[1], f"{at}[1]")


def _slot(
    info: dict[str, Any], role: ImportedRole, text: str, where: str, fallbacks: v.Fallbacks
) -> tuple[list[ImportedMessage], int]:
    when = fallbacks.time(info.get("timestamp"), f"{where}.timestamp", local=_TIME_SHAPES)
    versions = []
    for index, item in enumerate(fallbacks.arr(info.get("versions"), f"{where}.versions")):
        at = f"{where}.versions[{index}]"
        version = fallbacks.obj(item, at)
        content = fallbacks.opt_text(version.get("content"), f"{at}.content")
        if content is None:
            continue  # a version without its text: the others, or the row's own text, stand
        stamp = fallbacks.time(version.get("timestamp"), f"{at}.timestamp", local=_TIME_SHAPES)
        versions.append(ImportedMessage("", None, role, content, created_at=stamp or when))
    if not versions:
        return [ImportedMessage("", None, role, text, created_at=when)], 0
    return versions, fallbacks.index(
        info.get("current_version_index"), f"{where}.current_version_index"
    )
