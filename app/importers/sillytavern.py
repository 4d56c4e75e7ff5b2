"""SillyTavern chat files: `chats/<Character>/<Character> - <date>.jsonl`, a header line
`{user_name, character_name, create_date, chat_metadata}` then one message per line
`{name, is_user, send_date, mes, swipes[], swipe_id, swipe_info[{extra}], extra{model,
reasoning}}`.

Each message's swipes become siblings under the selected swipe of the message before (the
greeting's swipes: several roots); only the selected one continues. `send_date` is local time
in several shapes ("June 19, 2023 2:20pm", ISO, epoch ms). A line cut short (a crash while
saving) is skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from app.importers import forest, streams
from app.importers import values as v
from app.importers.entries import Entry, one
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member
from app.importers.tree import ImportedConversation, ImportedMessage

FORMAT = "sillytavern"
MAX_FILE_BYTES = 512 * 1024 * 1024
_DATE_SHAPES = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%Y-%m-%d @%Hh %Mm %Ss %fms")


def matches(member: Member) -> bool:
    try:
        header = _lines(member)[0]
        data = streams.loads(header, member.where)
    except (ImportRefusedError, IndexError):
        return False
    return isinstance(data, dict) and any(
        k in data for k in ("user_name", "character_name", "chat_metadata"))


def read(member: Member) -> Iterator[Entry]:
    lines = _lines(member)
    yield one(lines, member.where, lambda raw, where: _convert(raw, where, member))


def _lines(member: Member) -> list[bytes]:
    return [line for line in member.read(MAX_FILE_BYTES).splitlines() if line.strip()]


def _convert(lines: list[bytes], where: str, member: Member) -> ImportedConversation:
    if not lines:
        raise ImportRefusedError(f"{where} is empty.")
    header = v.obj(streams.loads(lines[0], f"{where}, line 1"), f"{where}, line 1")
    warnings: list[str] = []
    slots = []
    for number, line in enumerate(lines[1:], start=2):
        at = f"{where}, line {number}"
        try:
            item = streams.loads(line, at)
        except ImportRefusedError:
            warnings.append(f"Line {number} is cut short or damaged; it was left out.")
            continue
        slots.append(_slot(v.obj(item, at), at))
    messages, leaf = forest.versions(slots)
    character = v.text(header.get("character_name"), f"{where}.character_name")
    created = v.text(header.get("create_date"), f"{where}.create_date")
    stem = member.basename.removesuffix(".jsonl")
    source_id = f"{character}|{created}" if created else stem
    conversation = ImportedConversation(FORMAT, source_id, stem, messages, warnings=warnings)
    return forest.finish(conversation, leaf)


def _slot(message: dict[str, Any], at: str) -> tuple[list[ImportedMessage], int]:
    role = "user" if v.flag(message.get("is_user"), f"{at}.is_user") else "assistant"
    when = _when(message.get("send_date"))
    extra = v.opt_obj(message.get("extra"), f"{at}.extra")
    swipes = v.arr(message.get("swipes"), f"{at}.swipes")
    infos = v.arr(message.get("swipe_info"), f"{at}.swipe_info")
    if not swipes:
        return [_one(v.text(message.get("mes"), f"{at}.mes"), role, when, extra, at)], 0
    versions = []
    for index, swipe in enumerate(swipes):
        info = v.opt_obj(infos[index] if index < len(infos) else None, f"{at}.swipe_info")
        swipe_extra = v.opt_obj(info.get("extra"), f"{at}.swipe_info[{index}].extra") or extra
        stamp = _when(info.get("send_date")) or when
        versions.append(_one(v.text(swipe, f"{at}.swipes[{index}]"), role, stamp, swipe_extra,
                             at))
    return versions, v.index(message.get("swipe_id"), f"{at}.swipe_id")


def _one(text: str, role: str, when: float | None, extra: dict[str, Any],
         at: str) -> ImportedMessage:
    model = v.opt_text(extra.get("model"), f"{at}.extra.model") if role == "assistant" else None
    reasoning = v.text(extra.get("reasoning"), f"{at}.extra.reasoning")
    return ImportedMessage("", None, role, text, created_at=when,  # type: ignore[arg-type]
                           model=model, reasoning=reasoning)


def _when(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return v.utc(value, "send_date")
    if not isinstance(value, str):
        return None
    for shape in _DATE_SHAPES:
        try:
            return datetime.strptime(value.strip(), shape).timestamp()
        except ValueError:
            continue
    try:
        return v.utc(value, "send_date")
    except ImportRefusedError:
        return None


