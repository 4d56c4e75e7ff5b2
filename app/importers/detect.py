"""Which reader takes an input, decided by the shape of its contents, never by file names
alone: a zip or folder that is ChatGPT's or Claude's export, Jan's data folder, or else each
JSON/JSONL file by what it holds. An array is judged by the first element that has a known
shape (a folder or project record first in the file does not hide the conversations after it);
each element is then checked again by the reader and refused on its own if it does not fit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from app.importers import (
    branchwise,
    chatbox,
    chatgpt,
    claude,
    jan,
    librechat,
    lmstudio,
    openwebui,
    sillytavern,
    streams,
    textgen,
)
from app.importers.entries import Entry, each
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member, Source, open_source

EXPORT_SUFFIXES = (".json", ".jsonl")
MAX_OBJECT_BYTES = 512 * 1024 * 1024  # a file that is one JSON object is read whole
_PEEK_ELEMENTS = 50
_EXPORT_FILE = re.compile(r"(?:^|/)conversations(?:-\d+)?\.json$")
# Element shapes in a JSON array, in the order they are tried.
_ELEMENT_SHAPES: tuple[tuple[str, Callable[[dict[str, Any]], bool]], ...] = (
    (chatgpt.FORMAT, lambda e: isinstance(e.get("mapping"), dict)),
    (claude.FORMAT, lambda e: isinstance(e.get("chat_messages"), list)),
    (openwebui.FORMAT, openwebui.matches),
    (librechat.FORMAT, librechat.matches),
    (branchwise.FORMAT, branchwise.matches),
)
_CONVERTERS = {
    chatgpt.FORMAT: lambda item, where: chatgpt.convert(item, where, chatgpt.no_assets),
    claude.FORMAT: claude.convert,
    openwebui.FORMAT: openwebui.convert,
    librechat.FORMAT: librechat.convert,
    branchwise.FORMAT: branchwise.convert,
}


def readers(source: Source) -> list[tuple[str, Iterator[Entry]]]:
    """The format and entries of each part of `source` that holds conversations; refuses a
    source where none does."""
    whole = _whole_export(source)
    if whole is not None:
        return [whole]
    if any(jan.is_thread(m) for m in source.members):
        return [(jan.FORMAT, jan.read(source))]
    found, problems = [], []
    for member in source.members:
        if (
            member.name.endswith(".jsonl")
            or member.basename.endswith(".json")
            or (source.kind == "file")
        ):
            try:
                kind = classify(member)
            except ImportRefusedError as exc:  # a damaged file; others may still be fine
                problems.append(str(exc))
                continue
            if kind is not None:
                found.append((kind, read_member(kind, member)))
    if not found and problems:
        more = f" (and {len(problems) - 1} more files like it)" if len(problems) > 1 else ""
        raise ImportRefusedError(problems[0] + more)
    if not found:
        raise ImportRefusedError(
            f"{source.path.name}: no conversations of a known app were found (ChatGPT, Claude, "
            "Open WebUI, LibreChat, LM Studio, Jan, SillyTavern, text-generation-webui, "
            "Chatbox or Branchwise)."
        )
    return found


def is_chat_export(path: Path) -> bool:
    """Whether a dropped path is meant for an import rather than as an attachment: a folder or a
    zip always (the preview then says what it holds), a JSON or JSONL file when its contents
    are a known app's conversations; anything else is an attachment. Reads the file: call it
    off the GUI thread."""
    suffix = path.suffix.lower()
    if path.is_dir() or suffix == ".zip":
        return True
    if suffix not in EXPORT_SUFFIXES:
        return False
    try:
        with open_source(path) as source:
            return bool(readers(source))
    except (ImportRefusedError, OSError):
        return False


def _whole_export(source: Source) -> tuple[str, Iterator[Entry]] | None:
    if source.member(chatgpt.MANIFEST) is not None:
        return chatgpt.FORMAT, chatgpt.read(source)
    files = [m for m in source.members if _EXPORT_FILE.search(m.name) and m.name.count("/") < 2]
    if not files or source.kind == "file":
        return None
    kind = classify(min(files, key=lambda m: m.name))
    if kind == chatgpt.FORMAT:
        return kind, chatgpt.read(source)
    if kind == claude.FORMAT:
        return kind, each_member(files, claude.convert)
    return None


def each_member(members: list[Member], convert: Any) -> Iterator[Entry]:
    for member in members:
        yield from each(elements(member), member.where, convert)


def classify(member: Member) -> str | None:
    """The format of one file by its contents, or None; refuses a file whose JSON is
    damaged or hostile."""
    if member.name.endswith(".jsonl"):
        return sillytavern.FORMAT if sillytavern.matches(member) else None
    first = _first_byte(member)
    if first == b"[":
        with member.open() as raw:
            for element in islice(
                streams.items(raw, member.size + 1, member.where), _PEEK_ELEMENTS
            ):
                for kind, fits in _ELEMENT_SHAPES:
                    if isinstance(element, dict) and fits(element):
                        return kind
        return None
    if first != b"{":
        return None
    kind = _format_key(member)
    if kind in (branchwise.ARCHIVE, branchwise.STORE_FORMAT):
        return kind
    if member.size > MAX_OBJECT_BYTES:
        return None
    data = _load(member)
    for kind, fits in (
        *_ELEMENT_SHAPES,
        (lmstudio.FORMAT, lmstudio.matches),
        (textgen.FORMAT, textgen.matches),
        (chatbox.FORMAT, chatbox.matches),
    ):
        if isinstance(data, dict) and fits(data):
            return kind
    return None


def read_member(kind: str, member: Member) -> Iterator[Entry]:
    if kind == sillytavern.FORMAT:
        return sillytavern.read(member)
    if kind == lmstudio.FORMAT:
        return each([_load(member)], member.where, lmstudio.converter(member))
    if kind == textgen.FORMAT:
        return each([_load(member)], member.where, textgen.converter(member))
    if kind == chatbox.FORMAT:
        return chatbox.read(_load(member), member.where)
    if kind in (branchwise.ARCHIVE, branchwise.STORE_FORMAT):
        return branchwise.read_member(member, kind)
    return each(elements(member), member.where, _CONVERTERS[kind])


def elements(member: Member) -> Iterator[Any]:
    """The elements of a file that is a JSON array (streamed), or the one object it is."""
    if _first_byte(member) == b"[":
        with member.open() as raw:
            yield from streams.items(raw, member.size + 1, member.where)
    else:
        yield _load(member)


def _format_key(member: Member) -> object:
    """The top-level "format" value (Branchwise's files write it first)."""
    with member.open() as raw:
        for value in streams.items(raw, member.size + 1, member.where, "format"):
            return value
    return None


def _load(member: Member) -> Any:
    with member.open() as raw:
        return streams.load(raw, MAX_OBJECT_BYTES, member.where)


def _first_byte(member: Member) -> bytes:
    with member.open() as raw:
        head = raw.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1]
