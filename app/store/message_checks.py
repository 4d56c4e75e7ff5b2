"""The one check of a chat message's role, status and content shape, for everything that reads
messages from outside: the store's JSON import, the chat history importers and the OpenAI
server's request parser. Each caller turns `MessageFieldError` into its own refusal (a store
error, an import refusal, a 400), so a role that is an object or a status that is a list is
refused with a sentence instead of escaping as a TypeError. Standard library only."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast


class MessageFieldError(ValueError):
    """A message field of the wrong type or value; the message is written for people."""


def as_dict(value: object) -> dict[str, Any] | None:
    """`value` when it is a dict (as a JSON object, taken to have text keys), else None: how
    the checks read an entry that may be anything."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def check_choice(value: object, allowed: Collection[str], what: str) -> str:
    """`value` when it is one of `allowed`; `what` names the field ("role"). An object or a
    list is refused by its type, never hashed."""
    if not isinstance(value, str) or value not in allowed:
        shown = (
            repr(value)
            if isinstance(value, str | int | float | bool | None)
            else f"(a {type(value).__name__})"
        )
        raise MessageFieldError(f"Unknown {what} {shown}; expected one of {sorted(allowed)}.")
    return value


def text_content(content: object, what: str, *, allow_parts: bool = True) -> str:
    """A message's content as text: a string, nothing (""), or (with `allow_parts`) a list of
    {"type": "text", "text": str} parts joined. Any other part type is refused by name."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if allow_parts and isinstance(content, list):
        texts: list[str] = []
        for index, item in enumerate(cast("list[object]", content)):
            part = as_dict(item)
            if part is None:
                raise MessageFieldError(
                    f"{what}[{index}] must be an object, not a {type(item).__name__}."
                )
            kind = part.get("type")
            if kind != "text":
                named = repr(kind) if isinstance(kind, str) else "an unnamed"
                raise MessageFieldError(f"{what} has {named} part; only text is supported.")
            text = part.get("text", "")
            if not isinstance(text, str):
                raise MessageFieldError(f"{what}[{index}].text must be text.")
            texts.append(text)
        return "".join(texts)
    raise MessageFieldError(f"{what} must be text or a list of text parts.")
