"""SillyTavern chat files: `chats/<Character>/<Character> - <date>.jsonl`, a header line
`{user_name, character_name, create_date, chat_metadata}` then one message per line
`{name, is_user, send_date, mes, swipes[], swipe_id, swipe_info[{extra}], extra{model,
reasoning}}`.

Each message's swipes become siblings under the selected swipe of the message before (the
greeting's swipes: several roots); only the selected one continues. `send_date` and
`create_date` come in every shape SillyTavern has written: epoch milliseconds (its 2023 sample
chats), "2023-1-22 @14h 3m 12s 34ms", "June 19, 2023 2:20pm", ISO; local texts are read in this
computer's zone. A date, model or `extra` that cannot be read is left out with a warning; a
line cut short (a crash while saving) is skipped with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from app.importers import forest, streams
from app.importers import values as v
from app.importers.entries import Entry, one
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member
from app.importers.tree import ImportedConversation, ImportedMessage, ImportedRole

FORMAT = "sillytavern"
MAX_FILE_BYTES = 512 * 1024 * 1024
_DATE_SHAPES = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p")
# `humanizedDateTime`: "2023-1-22 @14h 3m 12s 34ms" (2023 files), "2025-05-11@19h32m07s".
_HUMANIZED = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})ms)?"
)


def matches(member: Member) -> bool:
    try:
        header = _lines(member)[0]
        data = streams.loads(header, member.where)
    except (ImportRefusedError, IndexError):
        return False
    return isinstance(data, dict) and any(
        k in data for k in ("user_name", "character_name", "chat_metadata")
    )


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
    fallbacks = v.Fallbacks(warnings)
    slots = []
    for number, line in enumerate(lines[1:], start=2):
        at = f"{where}, line {number}"
        try:
            item = streams.loads(line, at)
        except ImportRefusedError:
            warnings.append(f"Line {number} is cut short or damaged; it was left out.")
            continue
        try:
            slots.append(_slot(v.obj(item, at), at, fallbacks))
        except ImportRefusedError as exc:  # one unreadable message, not the conversation
            fallbacks.message_left_out(f"Line {number}", exc)
    messages, leaf = forest.versions(slots)
    character = fallbacks.text(header.get("character_name"), f"{where}.character_name")
    created = _date_id(header.get("create_date"), f"{where}.create_date", fallbacks)
    stem = member.basename.removesuffix(".jsonl")
    source_id = f"{character}|{created}" if created else stem
    conversation = ImportedConversation(FORMAT, source_id, stem, messages, warnings=warnings)
    return forest.finish(conversation, leaf)


def _slot(
    message: dict[str, Any], at: str, fallbacks: v.Fallbacks
) -> tuple[list[ImportedMessage], int]:
    role = "user" if v.flag(message.get("is_user"), f"{at}.is_user") else "assistant"
    when = _when(message.get("send_date"), f"{at}.send_date", fallbacks)
    extra = fallbacks.obj(message.get("extra"), f"{at}.extra")
    swipes = v.arr(message.get("swipes"), f"{at}.swipes")
    infos = fallbacks.arr(message.get("swipe_info"), f"{at}.swipe_info")
    if not swipes:
        text = v.text(message.get("mes"), f"{at}.mes")
        return [_one(text, role, when, extra, at, fallbacks)], 0
    versions = []
    for index, swipe in enumerate(swipes):
        place = f"{at}.swipe_info[{index}]"
        info = fallbacks.obj(infos[index] if index < len(infos) else None, place)
        swipe_extra = fallbacks.obj(info.get("extra"), f"{place}.extra") or extra
        stamp = _when(info.get("send_date"), f"{place}.send_date", fallbacks) or when
        text = v.text(swipe, f"{at}.swipes[{index}]")
        versions.append(_one(text, role, stamp, swipe_extra, at, fallbacks))
    return versions, fallbacks.index(message.get("swipe_id"), f"{at}.swipe_id")


def _one(
    text: str,
    role: ImportedRole,
    when: float | None,
    extra: dict[str, Any],
    at: str,
    fallbacks: v.Fallbacks,
) -> ImportedMessage:
    model = (
        fallbacks.opt_text(extra.get("model"), f"{at}.extra.model")
        if (role == "assistant")
        else None
    )
    reasoning = fallbacks.text(extra.get("reasoning"), f"{at}.extra.reasoning")
    return ImportedMessage("", None, role, text, created_at=when, model=model, reasoning=reasoning)


def _when(value: object, where: str, fallbacks: v.Fallbacks) -> float | None:
    if isinstance(value, str) and (match := _HUMANIZED.fullmatch(value.strip())):
        year, month, day, hour, minute, second, ms = (int(g or 0) for g in match.groups())
        try:
            return datetime(year, month, day, hour, minute, second, ms * 1000).timestamp()
        except ValueError:
            pass  # "2023-13-40 @...": not a date; falls through to the warning
    return fallbacks.time(value, where, local=_DATE_SHAPES)


def _date_id(value: object, where: str, fallbacks: v.Fallbacks) -> str:
    """`create_date` as text for the conversation's id: older files write epoch milliseconds,
    newer ones a local text; both are the same chat's identity as written."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return fallbacks.text(value, where)
