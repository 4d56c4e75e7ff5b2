"""What a compacted branch records, as the store keeps it (a message's `compaction` column,
JSON) and the export carries it. No SQL here: `app.store.compaction` writes these.

A compacted branch is a new root of the conversation's tree: a `summary` message, then copies
of the last turns it keeps word for word, then whatever the person says next. Its summary holds

    {"covers": [int, ...],       # the messages it summarises, root first (a path of the tree)
     "kept": [int, ...],         # the messages after them it keeps, copied below it in order
     "through": int,             # the last message of the path it compacts (its leaf then)
     "stands_for": int | None,   # the earlier tokens it stands for (None: not counted yet)
     "instruction": str,         # what the model was asked, after `covers`, to write it
     "edited": bool}             # optional: the person's edit of a written summary

and each copy holds `{"copy_of": int}`, the message it repeats. The ids are those of the store
(or, in an export, of the file: an import maps them to the new ones and drops those it cannot).
A summary of a compacted branch covers that branch's summary too; its `stands_for` counts what
the earlier summary stood for, so the figure is always the original chat's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from app.store.records import InvalidInputError, Message

_ID_LISTS = ("covers", "kept")
_ID_FIELDS = ("through", "copy_of")


def is_summary(message: Message) -> bool:
    return message.role == "summary"


def copy_of(message: Message) -> int | None:
    """The message a kept turn copies (None: not a copy)."""
    value = message.compaction.get("copy_of")
    return value if _is_id(value) else None


def covered_ids(summary: Message) -> list[int]:
    return [i for i in summary.compaction.get("covers", ()) if _is_id(i)]


def kept_ids(summary: Message) -> list[int]:
    return [i for i in summary.compaction.get("kept", ()) if _is_id(i)]


def stands_for(summary: Message) -> int | None:
    """The earlier tokens `summary` stands for, once counted."""
    value = summary.compaction.get("stands_for")
    return value if _is_id(value) else None


def path_summary(path: Sequence[Message]) -> Message | None:
    """The summary a path starts with (a compacted branch), else None."""
    return path[0] if path and is_summary(path[0]) else None


def summary_stats(path: Sequence[Message]) -> dict[str, Any]:
    """What a reply on `path` adds to its stats about the summary its prompt holds: the
    summary's id and the earlier tokens it stands for ({} on a branch without one)."""
    summary = path_summary(path)
    if summary is None:
        return {}
    tokens = stands_for(summary)
    return {"summary_id": summary.id, **({} if tokens is None else {"summary_of_tokens": tokens})}


def check_compaction(value: object, what: str) -> dict[str, Any]:
    """A compaction record as the store takes it (a copy); refuses ids that are not whole
    numbers and fields of the wrong kind, saying where."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a mapping, not {type(value).__name__}.")
    record = dict(cast("Mapping[str, Any]", value))
    for key in _ID_LISTS:
        ids = record.get(key, [])
        if not isinstance(ids, list) or not all(_is_id(i) for i in cast("list[object]", ids)):
            raise InvalidInputError(f"{what}: {key!r} must be a list of message ids.")
    for key in _ID_FIELDS:
        if key in record and not _is_id(record[key]):
            raise InvalidInputError(f"{what}: {key!r} must be a message id.")
    tokens = record.get("stands_for")
    if tokens is not None and not _is_id(tokens):
        raise InvalidInputError(f"{what}: 'stands_for' must be a number of tokens.")
    if not isinstance(record.get("instruction", ""), str):
        raise InvalidInputError(f"{what}: 'instruction' must be text.")
    return record


def remap_compaction(record: Mapping[str, Any], ids: Mapping[Any, Any]) -> dict[str, Any]:
    """`record` with its message ids turned into the ones `ids` maps them to (an import's new
    ids, or a file's source ids); an id `ids` does not know is left out (a message the file
    did not hold)."""
    out = dict(record)
    for key in _ID_LISTS:
        if key in out:
            out[key] = [ids[i] for i in out[key] if i in ids]
    for key in _ID_FIELDS:
        if key in out:
            if out[key] in ids:
                out[key] = ids[out[key]]
            else:
                del out[key]
    return out


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
