"""text-generation-webui's chat histories: `user_data/logs/{chat/<character>,instruct}/
<YYYYMMDD-HH-MM-SS>.json`, `{internal[[user, bot]...], visible[...], metadata{"user_N" |
"assistant_N": {timestamp, versions[{content, timestamp}], current_version_index}}}`.

`internal` holds the raw text (`visible` is HTML-escaped). Each turn's versions become siblings
under the selected version of the turn before. A character chat's first row
`["<|BEGIN-VISIBLE-CHAT|>", greeting]` is the greeting alone. Times are local without a zone
(taken in this computer's zone, minute precision).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.entries import Convert
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member
from app.importers.tree import ImportedConversation, ImportedMessage

FORMAT = "textgen"
_GREETING = "<|BEGIN-VISIBLE-CHAT|>"


def matches(data: dict[str, Any]) -> bool:
    return isinstance(data.get("internal"), list) and isinstance(data.get("visible"), list)


def converter(member: Member) -> Convert:
    def convert(raw: Any, where: str) -> ImportedConversation:
        return _convert(raw, where, member.name.removesuffix(".json"))

    return convert


def _convert(raw: Any, where: str, file_id: str) -> ImportedConversation:
    data = v.obj(raw, where)
    if not matches(data):
        raise ImportRefusedError(f"{where} is not a text-generation-webui history.")
    metadata = v.opt_obj(data.get("metadata"), f"{where}.metadata")
    slots = []
    for row_index, item in enumerate(data["internal"]):
        at = f"{where}.internal[{row_index}]"
        row = v.arr(item, at)
        if len(row) != 2:
            raise ImportRefusedError(f"{at} must hold a user text and a reply.")
        for side, role in ((0, "user"), (1, "assistant")):
            text = v.text(row[side], f"{at}[{side}]")
            if side == 0 and (text == _GREETING or not text):
                continue
            slots.append(_slot(metadata.get(f"{role}_{row_index}"), role, text, where))
    messages, leaf = forest.versions([s for s in slots if s[0]])
    return forest.finish(ImportedConversation(FORMAT, file_id, "", messages), leaf)


def _slot(meta: object, role: str, text: str, where: str) -> tuple[list[ImportedMessage], int]:
    info = v.opt_obj(meta, f"{where}.metadata")
    when = _local_time(info.get("timestamp"))
    versions = []
    for index, item in enumerate(v.arr(info.get("versions"), f"{where}.metadata.versions")):
        version = v.obj(item, f"{where}.metadata.versions[{index}]")
        content = v.text(version.get("content"), f"{where}.metadata.versions[{index}].content")
        stamp = _local_time(version.get("timestamp")) or when
        versions.append(ImportedMessage("", None, role, content, created_at=stamp))  # type: ignore[arg-type]
    if not versions:
        return [ImportedMessage("", None, role, text, created_at=when)], 0  # type: ignore[arg-type]
    return versions, v.index(info.get("current_version_index"), f"{where}.metadata")


def _local_time(value: object) -> float | None:
    if isinstance(value, str):
        try:
            return datetime.strptime(value.strip(), "%b %d, %Y %H:%M").timestamp()
        except ValueError:
            return None
    return v.utc(value, "timestamp") if isinstance(value, int | float) else None
