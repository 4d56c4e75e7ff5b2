"""Knowledge in a served chat completion: `"knowledge": ["NAME", …]` at the top of the body (the
`openai` client sends it with `extra_body`) names collections of the app's knowledge index.

The server retrieves as the window does, for the last user message together with the user
message before it, within the same budget, and puts the excerpts ahead of that message's text
in the same wrapper (`app.generation.knowledge_block`); the answer says what was used as
`"sources"` beside `choices` (each excerpt with its `number`, as the model was asked to cite it).
A streamed answer carries `"sources"` in its first chunk, the one that opens the assistant's
turn, so a client can show them before the text. Retrieval is deterministic for one state of the
index, so the same request twice renders the same prompt and the second is served from the
cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.generation.knowledge_block import knowledge_block
from app.knowledge.excerpts import Excerpt
from app.server.guard import ApiError

FIELD = "knowledge"


def parse_knowledge(body: dict[str, Any]) -> tuple[str, ...]:
    """The collections a request names (none when it names none); 400 for anything but a list
    of names."""
    value = body.get(FIELD)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(n, str) and n.strip() for n in value):
        raise ApiError(
            400,
            f"'{FIELD}' must be a list of knowledge collection names.",
            code="invalid_request",
            param=FIELD,
        )
    return tuple(dict.fromkeys(value))


def unknown_collections(wanted: Sequence[str], known: Sequence[str]) -> ApiError | None:
    """A 404 naming the collections the index does not hold, or None."""
    missing = [name for name in wanted if name not in known]
    if not missing:
        return None
    listed = ", ".join(repr(name) for name in known) or "none"
    return ApiError(
        404,
        f"No knowledge collection is named {', '.join(map(repr, missing))}; this server has "
        f"{listed}.",
        code="knowledge_not_found",
        param=FIELD,
    )


def turn_texts(messages: Sequence[dict[str, Any]]) -> tuple[int, str, str]:
    """The last user message's index, its text, and the text of the user message before it;
    400 when the request has no user message to retrieve for."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        raise ApiError(
            400,
            f"'{FIELD}' needs a user message to search for.",
            code="invalid_request",
            param=FIELD,
        )
    previous = _text(messages[users[-2]]["content"]) if len(users) > 1 else ""
    return users[-1], _text(messages[users[-1]]["content"]), previous


def with_excerpts(
    messages: list[dict[str, Any]], index: int, excerpts: Sequence[Excerpt]
) -> list[dict[str, Any]]:
    """`messages` with the excerpts ahead of message `index`'s text (its images stay first)."""
    block = knowledge_block([e.as_record() for e in excerpts])
    if not block:
        return messages
    message = dict(messages[index])
    content = message["content"]
    if isinstance(content, str):
        message["content"] = f"{block}\n\n{content}"
    else:
        parts = [dict(part) for part in content]
        text = next((p for p in parts if p.get("type") == "text"), None)
        if text is None:
            parts.append({"type": "text", "text": block})
        else:
            text["text"] = f"{block}\n\n{text['text']}"
        message["content"] = parts
    return [*messages[:index], message, *messages[index + 1 :]]


def sources(excerpts: Sequence[Excerpt]) -> list[dict[str, Any]]:
    """What the answer says it used: each excerpt's fields, numbered as the model read them."""
    listed = []
    for number, excerpt in enumerate(excerpts, start=1):
        record = excerpt.as_record()
        del record["kind"]
        listed.append({"number": number, **record})
    return listed


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
